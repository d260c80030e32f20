//! Paging of lists: `page` >= 1 (default 1), `page_size` 25..500 (default 100), and the envelope
//! `data`, `page`, `pages`, `results`.

use serde::Serialize;

pub const DEFAULT_PAGE_SIZE: u64 = 100;
pub const MIN_PAGE_SIZE: u64 = 25;
pub const MAX_PAGE_SIZE: u64 = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: u64,
    pub page_size: u64,
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest { page: 1, page_size: DEFAULT_PAGE_SIZE }
    }
}

impl PageRequest {
    /// Index of the first record of the page (saturating: a huge page is simply past the end).
    pub fn offset(&self) -> u64 {
        (self.page - 1).saturating_mul(self.page_size)
    }
    /// Number of pages for `results` records; an empty list has one (empty) page.
    pub fn pages(&self, results: u64) -> u64 {
        results.div_ceil(self.page_size).max(1)
    }
}

/// One page of a list.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub page: u64,
    pub pages: u64,
    pub results: u64,
}

impl<T> Page<T> {
    pub fn new(data: Vec<T>, req: PageRequest, results: u64) -> Page<T> {
        Page { data, page: req.page, pages: req.pages(results), results }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_arithmetic() {
        let r = PageRequest { page: 2, page_size: 25 };
        assert_eq!(r.offset(), 25);
        assert_eq!(r.pages(0), 1);
        assert_eq!(r.pages(25), 1);
        assert_eq!(r.pages(26), 2);
        let huge = PageRequest { page: u64::MAX, page_size: 500 };
        assert_eq!(huge.offset(), u64::MAX);
    }
}
