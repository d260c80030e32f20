# The read of a deep page's range counts on SQLite: every count of the scope, against the walk that
# stops at the range holding a random offset (docs/performance.md, "A deep page in a field's order
# stops reading counts at its range"). Run: python3 bench/scale/fence-walk.py
import sqlite3, random, time
db = sqlite3.connect(":memory:")
db.execute("""CREATE TABLE order_fence_counts (kind TEXT NOT NULL, scope_id BIGINT NOT NULL,
  fence BIGINT NOT NULL, shard BIGINT NOT NULL, n BIGINT NOT NULL,
  PRIMARY KEY (kind, scope_id, fence, shard)) WITHOUT ROWID""")
kinds = ["events.action","events.created","events.entity.id","events.entity.type","events.username","events.status"]
rows = []
for k in kinds:
    for f in range(489):
        rows.append((k, 1, f << 30, 0, 2045))
    for s in range(2, 200):
        for f in range(5):
            rows.append((k, s, f << 30, 0, 1000))
db.executemany("INSERT INTO order_fence_counts VALUES (?,?,?,?,?)", rows)
db.commit()
total = 489 * 2045
N = 2000
random.seed(1)
offs = [random.randrange(total) for _ in range(N)]
def all_counts(off, desc):
    return list(db.execute("SELECT fence, n FROM order_fence_counts WHERE kind = ? AND scope_id = ? ORDER BY fence", ("events.action", 1)))
def walk(off, desc):
    q = "SELECT fence, n FROM order_fence_counts WHERE kind = ? AND scope_id = ? ORDER BY fence" + (" DESC" if desc else "")
    passed = 0
    for fence, n in db.execute(q, ("events.action", 1)):
        if passed + n > off:
            return fence
        passed += n
for name, fn in [("all", all_counts), ("walk", walk)]:
    for desc in (False, True):
        t = time.perf_counter()
        for o in offs:
            fn(o, desc)
        dt = (time.perf_counter() - t) / N * 1000
        print(f"{name:5} desc={desc}: {dt:.3f} ms a read")
