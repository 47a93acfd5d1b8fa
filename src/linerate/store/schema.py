"""Schema migrations. MIGRATIONS[i] takes a database from user_version i to i+1; append, never edit."""

MIGRATIONS: list[str] = [
    """
    CREATE TABLE experiments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'run',          -- run | import | demo
        file_text TEXT,
        config TEXT NOT NULL DEFAULT '{}',         -- validated experiment as JSON
        config_hash TEXT,
        seed INTEGER,
        environment TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'running',    -- running | done | interrupted
        started_at REAL NOT NULL,
        ended_at REAL
    );
    CREATE INDEX experiments_name ON experiments(name);
    CREATE TABLE cells (
        id INTEGER PRIMARY KEY,
        experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        key TEXT NOT NULL,                         -- canonical JSON of the parameters
        params TEXT NOT NULL,
        UNIQUE (experiment_id, key)
    );
    CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
        repetition INTEGER NOT NULL,
        attempt INTEGER NOT NULL DEFAULT 1,
        status TEXT NOT NULL,                      -- ok | failed
        final INTEGER NOT NULL DEFAULT 1,          -- 0: a failed attempt that was retried
        error TEXT,
        throughput_bps REAL, sender_bps REAL, reverse_throughput_bps REAL,
        retransmits INTEGER, cpu_local_pct REAL, cpu_remote_pct REAL,
        lost_percent REAL, jitter_ms REAL, congestion TEXT, iperf3_version TEXT,
        flags TEXT NOT NULL DEFAULT '[]',          -- e.g. ["generator-bound"]
        argv TEXT NOT NULL DEFAULT '[]',
        dut_counters TEXT NOT NULL DEFAULT '{}',
        raw TEXT,
        started_at REAL, ended_at REAL,
        UNIQUE (cell_id, repetition, attempt)
    );
    CREATE INDEX trials_cell ON trials(cell_id, status);
    """,
    """
    CREATE TABLE lab_states (                    -- read-back knob values, stored once per distinct lab
        id INTEGER PRIMARY KEY,
        digest TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL
    );
    ALTER TABLE trials ADD COLUMN lab_state_id INTEGER REFERENCES lab_states(id);
    CREATE TABLE calibrations (
        id INTEGER PRIMARY KEY,
        shape TEXT NOT NULL,                       -- lab shape + traffic case, canonical JSON
        throughput_bps REAL NOT NULL,
        sender_cpu_pct REAL,
        measured_at REAL NOT NULL,
        environment TEXT NOT NULL DEFAULT '{}',
        UNIQUE (shape)
    );
    """,
]
