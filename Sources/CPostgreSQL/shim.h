// Where Debian's libpq-dev puts libpq's headers (pkg-config --cflags libpq); the header only:
// PostgresClient loads the library itself (LibPQ.swift), so nothing links it.
#include <postgresql/libpq-fe.h>
