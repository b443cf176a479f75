/** @module Versioned schema migrations, tracked in PRAGMA user_version; each runs in one transaction. */

/** The market-data file. */
export const MIGRATIONS: readonly string[] = [
  // 1: the initial layout (FORMAT.md).
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO meta (key, value) VALUES ('generation', 0);
   CREATE TABLE chunks (
     symbol TEXT NOT NULL, period TEXT NOT NULL, start_ms INTEGER NOT NULL,
     first_ms INTEGER NOT NULL, last_ms INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL,
     PRIMARY KEY (symbol, period, start_ms)) WITHOUT ROWID;
   CREATE TABLE instruments (
     symbol TEXT PRIMARY KEY, code TEXT NOT NULL, exchange TEXT NOT NULL, name TEXT, type TEXT,
     listing_date TEXT, tick_size REAL, total_shares REAL, float_shares REAL, limit_up REAL, limit_down REAL) WITHOUT ROWID;
   CREATE TABLE ex_factors (symbol TEXT NOT NULL, ts INTEGER NOT NULL, ex_factor REAL NOT NULL, PRIMARY KEY (symbol, ts)) WITHOUT ROWID;
   CREATE TABLE api_keys (
     id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
     created_ms INTEGER NOT NULL, revoked_ms INTEGER, rate_per_min REAL, burst REAL);`,
  // 2: a random id per store, so data versions (ETags) of two stores never collide.
  `INSERT INTO meta (key, value) VALUES ('store_id', abs(random() % 1000000000000));`,
  // 3: keys live in their own file (KEY_MIGRATIONS); SqliteKeyStore moves them out before this runs.
  `DROP TABLE IF EXISTS api_keys;`,
  // 4: TickFlow's name_en (CN) and lot_size (HK); imported universes and their members.
  `ALTER TABLE instruments ADD COLUMN name_en TEXT;
   ALTER TABLE instruments ADD COLUMN lot_size INTEGER;
   CREATE TABLE universes (id TEXT PRIMARY KEY, name TEXT NOT NULL, region TEXT, category TEXT, description TEXT) WITHOUT ROWID;
   CREATE TABLE universe_members (universe_id TEXT NOT NULL, position INTEGER NOT NULL, symbol TEXT NOT NULL, PRIMARY KEY (universe_id, position)) WITHOUT ROWID;`,
  // 5: intraday rollups (5m..60m chunks in the chunks table). SQL cannot fold bars: this marks the
  // store as needing them and SqliteMarketStore.open builds them (rollups.ts) in one transaction.
  `INSERT INTO meta (key, value) VALUES ('rollups_pending', 1);`,
  // 6: financial statements, every version of each period (values as a JSON object, FORMAT.md);
  // universe memberships with dates.
  `CREATE TABLE financials (
     statement TEXT NOT NULL, symbol TEXT NOT NULL, period_end TEXT NOT NULL, announce_date TEXT NOT NULL, data TEXT NOT NULL,
     PRIMARY KEY (statement, symbol, period_end, announce_date)) WITHOUT ROWID;
   ALTER TABLE universe_members ADD COLUMN in_date TEXT;
   ALTER TABLE universe_members ADD COLUMN out_date TEXT;`,
  // 7: live data (FORMAT.md "Tail"): appended bars as rows until folded into chunks; which symbols
  // live commits changed (per-symbol versions); the latest pushed quote and depth per symbol.
  `CREATE TABLE tail (
     symbol TEXT NOT NULL, period TEXT NOT NULL, ts INTEGER NOT NULL,
     open REAL NOT NULL, high REAL NOT NULL, low REAL NOT NULL, close REAL NOT NULL,
     volume REAL NOT NULL, amount REAL NOT NULL, prev_close REAL,
     PRIMARY KEY (symbol, period, ts)) WITHOUT ROWID;
   CREATE TABLE live_symbols (symbol TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
   CREATE INDEX live_symbols_by_seq ON live_symbols (seq);
   INSERT INTO meta (key, value) VALUES ('live_seq', 0);
   CREATE TABLE live_quotes (symbol TEXT PRIMARY KEY, ts INTEGER NOT NULL, quote TEXT NOT NULL) WITHOUT ROWID;
   CREATE TABLE live_depth (symbol TEXT PRIMARY KEY, ts INTEGER NOT NULL, depth TEXT NOT NULL) WITHOUT ROWID;`,
  // 8: live quotes written as JSON arrays (FORMAT.md "Live data"); rows written as objects before
  // are read as they are. Nothing to change here: the version keeps an older mdq, which cannot read
  // the arrays, from opening the store (one that has it open already must be stopped first).
  `SELECT 1;`,
  // 9: the chunks' spans without their BLOBs (FORMAT.md "Chunks"): a seek in the chunks table itself
  // reads the whole BLOB of every row it compares on the way, overflow pages and all.
  `CREATE INDEX chunk_spans ON chunks (symbol, period, start_ms, first_ms, last_ms, count);`,
  // 10: live quotes written as doubles (a BLOB in the TEXT column: SQLite keeps a value's own type;
  // FORMAT.md "Live data"); rows written as JSON before are read as they are. As 8: the version keeps
  // an older mdq, which cannot read the doubles, from opening the store.
  `SELECT 1;`,
  // 11: a live commit's symbols in one row of its own (FORMAT.md "Versions"), folded into
  // `live_symbols` in the background, instead of a mark on each symbol at every commit.
  `CREATE TABLE live_commits (seq INTEGER PRIMARY KEY, symbols TEXT NOT NULL);`,
]

/** The keys file (`<store>.keys.db` by default): apart, so a long import never blocks key changes. */
export const KEY_MIGRATIONS: readonly string[] = [
  `CREATE TABLE api_keys (
     id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
     created_ms INTEGER NOT NULL, revoked_ms INTEGER, rate_per_min REAL, burst REAL);`,
  // 2: scopes; every key made before them reads only.
  `ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'read';`,
]

/** Span of one chunk per stored period (FORMAT.md, "Chunks"). */
export const CHUNK_SPAN_MS = {
  '1m': 7 * 86_400_000,
  '1d': 1024 * 86_400_000,
  // Rollups (migration 5): about as many bars a chunk as a 1m chunk's 1,700 would be too coarse for
  // windows; these keep a chunk at 300-600 bars.
  '5m': 7 * 86_400_000,
  '10m': 14 * 86_400_000,
  '15m': 21 * 86_400_000,
  '30m': 42 * 86_400_000,
  '60m': 84 * 86_400_000,
} as const
