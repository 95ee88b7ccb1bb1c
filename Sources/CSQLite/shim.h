#include <sqlite3.h>

/// `sqlite3_db_config` is variadic, which Swift cannot call: this sets
/// `SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE` (https://sqlite.org/c3ref/c_dbconfig_defensive.html).
static inline int relay_sqlite3_set_no_checkpoint_on_close(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, (int *)0);
}
