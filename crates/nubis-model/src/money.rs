//! Money: an amount of US dollars held as an integer, never as floating point. One type,
//! [`Money<P>`], counts units of 10^-P dollars: cents ([`Cents`], P = 2) for balances, payments,
//! invoices and promotions, millionths of a dollar ([`Micros`], P = 6) for prices. One parser
//! reads a decimal dollar amount into either; one writer shows either as a decimal, and as the
//! JSON number of dollars the API shows.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An amount of US dollars in units of 10^-P dollars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Money<const P: u32>(pub i64);

/// Whole cents: balances, payments, invoices, promotions.
pub type Cents = Money<2>;
/// Millionths of a dollar: the prices of the catalog and of load balancers (`0.0075` an hour).
pub type Micros = Money<6>;

/// `Cents(1234)` is 12.34 dollars (the constructor under the name the store and the views use).
#[allow(non_snake_case)]
pub const fn Cents(cents: i64) -> Cents {
    Money(cents)
}

/// The most digits before the decimal point an amount may have.
const MAX_WHOLE_DIGITS: usize = 12;

impl<const P: u32> Money<P> {
    const UNIT: i64 = 10i64.pow(P);

    /// So many units (cents for [`Cents`], millionths for [`Micros`]).
    pub const fn from_units(units: i64) -> Self {
        Money(units)
    }

    /// A whole number of dollars.
    pub const fn whole_dollars(dollars: i64) -> Self {
        Money(dollars * Self::UNIT)
    }

    /// A decimal dollar amount: digits, optionally a point and at most P decimals (`12`,
    /// `0.015`, `5.5`); no sign, no commas, no exponent. `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
        if whole.is_empty() || whole.len() > MAX_WHOLE_DIGITS || !whole.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if frac.len() > P as usize || !frac.bytes().all(|b| b.is_ascii_digit()) || (s.ends_with('.')) {
            return None;
        }
        let w: i64 = whole.parse().ok()?;
        let f: i64 = if frac.is_empty() { 0 } else { frac.parse::<i64>().ok()? * 10i64.pow(P - frac.len() as u32) };
        Some(Money(w.checked_mul(Self::UNIT)?.checked_add(f)?))
    }

    /// The amount as a decimal with at least two decimals and no trailing zeros past them
    /// (`12.34`, `-0.50`, `0.0075`, `5.00`).
    pub fn dollars(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        let unit = Self::UNIT as u64;
        let frac = format!("{:0width$}", a % unit, width = P as usize);
        let mut f = frac.trim_end_matches('0');
        if f.len() < 2 {
            f = &frac[..2.min(frac.len())];
        }
        format!("{sign}{}.{f}", a / unit)
    }

    /// The same amount in units of 10^-Q dollars, rounded half up when Q < P.
    pub fn to<const Q: u32>(self) -> Money<Q> {
        if Q >= P {
            Money(self.0.saturating_mul(10i64.pow(Q - P)))
        } else {
            let d = 10i64.pow(P - Q);
            Money((self.0 + d / 2).div_euclid(d))
        }
    }

    /// `self * num / den`, rounded half up to a multiple of `step` units (`den` > 0, `step` > 0).
    pub fn scaled(self, num: i64, den: i64, step: i64) -> Self {
        let d = den.saturating_mul(step);
        Money((self.0.saturating_mul(num) + d / 2).div_euclid(d).saturating_mul(step))
    }
}

/// The payment grammar of spec 2.5 (`usd`): an optional `$`, digits without commas, a decimal
/// point and one or two decimal digits. Returns cents.
pub fn parse_usd(s: &str) -> Option<i64> {
    let s = s.strip_prefix('$').unwrap_or(s);
    let (_, frac) = s.split_once('.')?;
    if frac.is_empty() {
        return None;
    }
    Cents::parse(s).map(|c| c.0)
}

/// Writes a decimal as a JSON number. Exact: the decimal has at most 17 significant digits, so
/// the double nearest to it prints (shortest round-trip form) as the decimal itself.
fn write_decimal<S: Serializer>(decimal: &str, s: S) -> Result<S::Ok, S::Error> {
    let v: f64 = decimal.parse().map_err(serde::ser::Error::custom)?;
    s.serialize_f64(v)
}

/// A JSON number of dollars (`1234` cents is `12.34`, `500` cents is `5.0`).
impl<const P: u32> Serialize for Money<P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_decimal(&self.dollars(), s)
    }
}

/// Cents as a JSON number of dollars, whole dollars as an integer (`500` cents is `5`): the
/// form of the child-account views.
pub fn whole_dollars_as_integer<S: Serializer>(cents: &i64, s: S) -> Result<S::Ok, S::Error> {
    if cents % 100 == 0 { s.serialize_i64(cents / 100) } else { write_decimal(&Cents(*cents).dollars(), s) }
}

/// Read from a string (`"0.015"`) or a number (`0.015`, `10`) of dollars. A number is read as
/// the decimal it was written as (the shortest form of the double), never through arithmetic.
impl<'de, const P: u32> Deserialize<'de> for Money<P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const P: u32>;
        impl<const P: u32> serde::de::Visitor<'_> for V<P> {
            type Value = Money<P>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a dollar amount with at most {P} decimals, such as \"0.015\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Money<P>, E> {
                Money::parse(v).ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Money<P>, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Money<P>, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Money<P>, E> {
                // `Display` of a double is its shortest round-trip decimal, without exponent.
                self.visit_str(&v.to_string())
            }
        }
        d.deserialize_any(V::<P>)
    }
}

impl<const P: u32> utoipa::PartialSchema for Money<P> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::schema::Type::Number).into()
    }
}
impl<const P: u32> utoipa::ToSchema for Money<P> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_grammar() {
        assert_eq!(parse_usd("5.00"), Some(500));
        assert_eq!(parse_usd("$120.5"), Some(12050));
        assert_eq!(parse_usd("0.01"), Some(1));
        for bad in ["5", "5.", "1,000.00", "$", "", ".50", "5.001", "-5.00", "$$5.00", "5.0a", " 5.00"] {
            assert_eq!(parse_usd(bad), None, "{bad}");
        }
    }

    #[test]
    fn decimal_amounts_parse_exactly_in_either_unit() {
        assert_eq!(Micros::parse("0.015"), Some(Money(15_000)));
        assert_eq!(Micros::parse("10.00"), Some(Money(10_000_000)));
        assert_eq!(Micros::parse("10"), Some(Money(10_000_000)));
        assert_eq!(Micros::parse("0.0075"), Some(Money(7_500)));
        assert_eq!(Cents::parse("12.5"), Some(Money(1250)));
        for bad in ["1.0000001", "", ".5", "5.", "-1", "1e3", "1,0", "1234567890123"] {
            assert_eq!(Micros::parse(bad), None, "{bad}");
        }
        assert_eq!(Cents::parse("0.001"), None);
    }

    #[test]
    fn amounts_print_exactly() {
        assert_eq!(Cents(1234).dollars(), "12.34");
        assert_eq!(Cents(-50).dollars(), "-0.50");
        assert_eq!(Micros::parse("0.007").unwrap().dollars(), "0.007");
        assert_eq!(Money::<6>(5_000_000).dollars(), "5.00");
        assert_eq!(Money::<6>(12_500_000).dollars(), "12.50");
        assert_eq!(Money::<6>(7_500).dollars(), "0.0075");
        assert_eq!(serde_json::to_string(&Cents(1005)).unwrap(), "10.05");
        assert_eq!(serde_json::to_string(&Cents(500)).unwrap(), "5.0");
        assert_eq!(serde_json::to_string(&Money::<6>(7_500)).unwrap(), "0.0075");
        assert_eq!(serde_json::to_string(&Money::<6>(33_000)).unwrap(), "0.033");
        // Amounts a double cannot hold as an integer of cents still print as their decimal.
        assert_eq!(serde_json::to_string(&Cents(123_456_789_012_345)).unwrap(), "1234567890123.45");
    }

    #[test]
    fn units_convert_half_up() {
        assert_eq!(Money::<6>(15_000).to::<2>(), Cents(2));
        assert_eq!(Money::<6>(14_999).to::<2>(), Cents(1));
        assert_eq!(Cents(5).to::<6>(), Money(50_000));
        // 5.00 a month over 730 hours, to the thousandth of a dollar: 0.007.
        assert_eq!(Money::<6>(5_000_000).scaled(1, 730, 1000), Money(7_000));
        assert_eq!(Money::<6>(7_000).scaled(1, 4, 1000), Money(2_000));
    }

    #[test]
    fn configuration_amounts_read_strings_and_numbers() {
        #[derive(Deserialize)]
        struct P {
            a: Micros,
            b: Micros,
            c: Micros,
        }
        let p: P = serde_json::from_str(r#"{"a": "0.015", "b": 0.0075, "c": 10}"#).unwrap();
        assert_eq!((p.a.0, p.b.0, p.c.0), (15_000, 7_500, 10_000_000));
        assert!(serde_json::from_str::<P>(r#"{"a": "cheap", "b": 1, "c": 1}"#).is_err());
        assert!(serde_json::from_str::<P>(r#"{"a": -1, "b": 1, "c": 1}"#).is_err());
    }

    #[test]
    fn whole_dollars_can_be_written_as_integers() {
        #[derive(Serialize)]
        struct B {
            #[serde(serialize_with = "whole_dollars_as_integer")]
            v: i64,
        }
        assert_eq!(serde_json::to_string(&B { v: 500 }).unwrap(), r#"{"v":5}"#);
        assert_eq!(serde_json::to_string(&B { v: 1234 }).unwrap(), r#"{"v":12.34}"#);
    }
}
