//! Files that hold the whole state or live secrets (the database with its `-wal` and `-shm`
//! files, snapshots, backups, outbox messages with set-password links, the admin token) are
//! readable by their owner only: files 0600, and the directories nubis creates for them 0700
//! (directories that already exist, such as a data directory an operator made, are left as
//! they are).

use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The mode of every file nubis writes state or secrets to.
pub const FILE_MODE: u32 = 0o600;
/// The mode of every directory nubis creates for them.
pub const DIR_MODE: u32 = 0o700;

/// Creates a directory and its missing parents, each new one 0700.
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(path)
}

/// Opens a file for writing, created 0600 (or truncated, and made 0600 if it existed).
pub fn create_private_file(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new().write(true).create(true).truncate(true).mode(FILE_MODE).open(path)?;
    f.set_permissions(Permissions::from_mode(FILE_MODE))?;
    Ok(f)
}

/// Makes a file 0600 if it exists.
pub fn restrict(path: &Path) -> io::Result<()> {
    match fs::set_permissions(path, Permissions::from_mode(FILE_MODE)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
}

/// A SQLite database file with the `-wal`, `-shm` and `-journal` files beside it.
pub fn sqlite_files(db: &Path) -> [PathBuf; 4] {
    let with = |suffix: &str| {
        let mut name = db.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    };
    [db.to_path_buf(), with("-wal"), with("-shm"), with("-journal")]
}

/// Makes a SQLite database and the files beside it 0600 (SQLite gives the files it creates
/// later the database file's mode).
pub fn restrict_sqlite(db: &Path) -> io::Result<()> {
    sqlite_files(db).iter().try_for_each(|p| restrict(p))
}

/// Creates an empty SQLite database file 0600 when none exists, so that SQLite opens it (and
/// creates its `-wal` and `-shm` files) with that mode.
pub fn precreate_sqlite(db: &Path) -> io::Result<()> {
    match OpenOptions::new().write(true).create_new(true).mode(FILE_MODE).open(db) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        r => r.map(|_| ()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_directories_are_private() {
        let base = std::env::temp_dir().join(format!("nubis-files-{}", crate::unique_suffix()));
        let dir = base.join("a/b");
        create_private_dir(&dir).unwrap();
        for d in [&base.join("a"), &dir] {
            assert_eq!(fs::metadata(d).unwrap().permissions().mode() & 0o777, DIR_MODE);
        }
        let f = dir.join("x");
        fs::write(&f, "old").unwrap();
        fs::set_permissions(&f, Permissions::from_mode(0o644)).unwrap();
        drop(create_private_file(&f).unwrap());
        assert_eq!(fs::metadata(&f).unwrap().permissions().mode() & 0o777, FILE_MODE);
        let db = dir.join("n.db");
        precreate_sqlite(&db).unwrap();
        assert_eq!(fs::metadata(&db).unwrap().permissions().mode() & 0o777, FILE_MODE);
        let _ = fs::remove_dir_all(&base);
    }
}
