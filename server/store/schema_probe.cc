#include "server/store/schema_probe.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "absl/cleanup/cleanup.h"
#include "server/store/connection.h"
#include "server/store/migrations.h"

namespace wsched::store {
namespace {

// A database host that vanishes without closing the connection (a crash, a
// partition) would otherwise hold the probe's query until TCP gives up,
// minutes later, with health still showing the last answer. With a user
// timeout the kernel drops the connection once the query has gone
// unacknowledged this long, and the probe reports the database unreachable.
// Only for the probe's query: the connection goes back to the pool, where a
// group commit may rightly wait longer on a busy server. (A no-op on a Unix
// socket, which cannot be partitioned.)
constexpr unsigned kProbeUnacknowledgedLimitMs = 5000;

void SetUnacknowledgedLimit(pqxx::connection& connection, unsigned limit_ms) {
  int fd = connection.sock();
  if (fd < 0) return;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &limit_ms, sizeof limit_ms);
}

}  // namespace

absl::StatusOr<int> ReadSchemaVersion(Database& db) {
  int version = 0;
  absl::Status status =
      WithConnection(db, "health check", [&](pqxx::connection& connection) -> absl::Status {
        SetUnacknowledgedLimit(connection, kProbeUnacknowledgedLimitMs);
        // The system's default again, also when the query throws.
        absl::Cleanup restore = [&connection] { SetUnacknowledgedLimit(connection, 0); };
        pqxx::nontransaction txn(connection);
        version = txn.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0]
                      .as<int>();
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return version;
}

int EmbeddedSchemaVersion() {
  const std::vector<Migration>& migrations = EmbeddedMigrations();
  return migrations.empty() ? 0 : migrations.back().version;
}

}  // namespace wsched::store
