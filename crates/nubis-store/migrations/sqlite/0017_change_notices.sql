-- Change notices exist for PostgreSQL only: on SQLite one process writes the database and its
-- cache learns what each write touched from an update hook.
SELECT 1;
