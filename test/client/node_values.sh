#!/bin/bash
# node_values.sh — runs test/client/node/values.test.mjs (numeric text and filter
# values, empty IN lists) on the SQLite bundled with better-sqlite3 (3.53 or
# later), through node_limit.sh; same environment and exit statuses.
exec "$(cd "$(dirname "$0")" && pwd)/node_limit.sh" values.test.mjs
