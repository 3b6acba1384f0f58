// A PostgreSQL that hangs instead of dying (docs/operations.md, "Bounded
// waits"): a private cluster frozen with SIGSTOP (its sockets stay open, its
// kernel keeps acknowledging, nothing answers). Every path of the store that
// can meet it answers within its bound with UNAVAILABLE, reason
// DATABASE_UNAVAILABLE and RetryInfo, and recovers by itself once the
// server runs again; the lock leases end as docs/architecture.md ("Leases")
// says. And a database that is not there at all gets the same reason on the
// same paths.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/error_reason.h"
#include "server/store/call_watchdog.h"
#include "server/store/commit_batcher.h"
#include "server/store/database.h"
#include "server/scheduler/scaling_election.h"
#include "server/store/leader_lock.h"
#include "server/store/migrations.h"
#include "server/store/placer_lock.h"
#include "server/store/schema_probe.h"
#include "server/store/unit_of_work.h"
#include "tests/support/eventually.h"
#include "tests/support/server_process.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

// UNAVAILABLE with the documented reason and RetryInfo (docs/api.md).
void ExpectDatabaseUnavailable(const absl::Status& status) {
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  std::optional<core::ErrorDetails> details = core::DetailsOf(status);
  ASSERT_TRUE(details.has_value()) << "no reason: " << status;
  EXPECT_EQ(details->reason, core::ErrorReason::kDatabaseUnavailable) << status;
  EXPECT_EQ(details->retry_delay, core::kDatabaseRetryDelay) << status;
}

// A PostgreSQL of this test's own (deploy/local/pg.sh) that can be frozen.
class FreezablePostgres {
 public:
  FreezablePostgres()
      : dir_(absl::StrCat("/tmp/wsched-hung-pg-", getpid())), port_(testing::FreePort()) {
    Pg("start", absl::StrCat(" ", port_));
    url_ = absl::StrCat("postgresql://postgres@127.0.0.1:", port_, "/postgres");
  }
  ~FreezablePostgres() {
    Resume();
    Pg("stop", "");
    std::filesystem::remove_all(dir_);
    std::filesystem::remove(dir_ + ".initdb.log");
  }
  const std::string& url() const { return url_; }

  // SIGSTOP to the postmaster first (so it forks nothing new), then to each
  // of its children: every backend of every open connection.
  void Freeze() {
    const pid_t postmaster = Postmaster();
    ASSERT_GT(postmaster, 0);
    ASSERT_EQ(kill(postmaster, SIGSTOP), 0);
    frozen_ = {postmaster};
    for (pid_t child : Children(postmaster)) {
      if (kill(child, SIGSTOP) == 0) frozen_.push_back(child);
    }
  }
  void Resume() {
    for (pid_t pid : frozen_) kill(pid, SIGCONT);
    frozen_.clear();
  }

 private:
  void Pg(const std::string& verb, const std::string& args) {
    const std::string command =
        absl::StrCat("PG_EXTRA_OPTS='-c fsync=off' ", testing::SourcePath("deploy/local/pg.sh"), " ",
                     verb, " ", dir_, args, " >/dev/null 2>&1");
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  pid_t Postmaster() const {
    std::ifstream file(dir_ + "/postmaster.pid");
    int pid = 0;
    file >> pid;
    return pid;
  }
  static std::vector<pid_t> Children(pid_t parent) {
    std::vector<pid_t> children;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      int pid = 0;
      if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      std::getline(stat, line);
      // pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
      const size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::vector<std::string> fields = absl::StrSplit(line.substr(close + 2), ' ');
      int ppid = 0;
      if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &ppid) && ppid == parent) {
        children.push_back(pid);
      }
    }
    return children;
  }

  const std::string dir_;
  const int port_;
  std::string url_;
  std::vector<pid_t> frozen_;
};

// Short bounds, so the test waits seconds, not the defaults.
constexpr store::DatabaseBounds kBounds{.call = absl::Seconds(1),
                                        .sweep = absl::Seconds(2),
                                        .probe = absl::Milliseconds(500)};
constexpr absl::Duration kSlack = absl::Milliseconds(500);  // Watchdog tick and scheduling.

store::WorkspaceWrite AStop(const std::string& id) {
  store::WorkspaceWrite write;
  write.kind = store::WorkspaceWrite::Kind::kStop;
  write.workspace.id = id;
  return write;
}

absl::Status ReadOne(store::Database& db) {
  return store::UnitOfWork::Run(db, "reading the catalog generation", [](store::UnitOfWork& unit) {
    (void)unit.catalog().Generation();
    return absl::OkStatus();
  });
}

class HungDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Database::Connect(pg_.url(), 2, kBounds);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    ASSERT_TRUE(store::ApplyEmbeddedMigrations(*db_).ok());
  }

  FreezablePostgres pg_;
  std::unique_ptr<store::Database> db_;
};

TEST_F(HungDatabaseTest, APooledCallIsAbandonedAtItsBoundAndTheNextOneWorksOnceItRunsAgain) {
  ASSERT_TRUE(ReadOne(*db_).ok());
  const int64_t abandoned_before = store::CallWatchdog::Global().abandoned_total();
  pg_.Freeze();
  const absl::Time start = absl::Now();
  absl::Status status = ReadOne(*db_);
  const absl::Duration took = absl::Now() - start;
  ExpectDatabaseUnavailable(status);
  EXPECT_THAT(status.message(), HasSubstr("no answer from PostgreSQL within 1s"));
  EXPECT_GE(took, kBounds.call);
  EXPECT_LT(took, kBounds.call + kSlack);
  EXPECT_GT(store::CallWatchdog::Global().abandoned_total(), abandoned_before);

  // The health check's query. The abandoned call took the pool's idle
  // connections with it (as stuck), so the check opens one: that is
  // bounded by the URL's connect_timeout (2 s, added by WithNetworkBounds),
  // the query by the probe bound.
  const absl::Time probe_start = absl::Now();
  absl::StatusOr<int> version = store::ReadSchemaVersion(*db_);
  ASSERT_FALSE(version.ok());
  ExpectDatabaseUnavailable(version.status());
  EXPECT_LT(absl::Now() - probe_start, absl::Seconds(2) + kBounds.probe + kSlack);

  pg_.Resume();
  EXPECT_TRUE(ReadOne(*db_).ok());
  EXPECT_TRUE(store::ReadSchemaVersion(*db_).ok());
  std::printf("frozen PostgreSQL: a pooled call answered UNAVAILABLE after %s (bound %s)\n",
              absl::FormatDuration(took).c_str(), absl::FormatDuration(kBounds.call).c_str());
}

TEST_F(HungDatabaseTest, TheGroupCommitAnswersAStuckBatchAtItsBoundAndRecoversByItself) {
  store::CommitBatcher batcher(db_.get(), {});
  // (A stop of a workspace nobody placed: whatever it answers, it commits.)
  ASSERT_FALSE(absl::IsUnavailable(batcher.Run(AStop("before")).status));
  EXPECT_EQ(db_->writer_failing_since(), absl::InfiniteFuture());
  pg_.Freeze();
  const absl::Time start = absl::Now();
  store::WriteOutcome stuck = batcher.Run(AStop("stuck"));
  const absl::Duration took = absl::Now() - start;
  ExpectDatabaseUnavailable(stuck.status);
  EXPECT_THAT(stuck.status.message(), HasSubstr("group commit"));
  EXPECT_LT(took, kBounds.call + kSlack);
  EXPECT_LT(db_->writer_failing_since(), absl::InfiniteFuture()) << "health must hear of it";
  // While it hangs, the next batch fails within the connect timeout: the
  // writer does not wait on the frozen server's accept queue forever.
  store::WriteOutcome next = batcher.Run(AStop("next"));
  ExpectDatabaseUnavailable(next.status);

  pg_.Resume();
  // The idle writer reconnects by itself: no caller has to pay for it.
  EXPECT_TRUE(testing::Eventually(
      [&] { return db_->writer_failing_since() == absl::InfiniteFuture(); }, 10));
  EXPECT_FALSE(absl::IsUnavailable(batcher.Run(AStop("after")).status));
  std::printf("frozen PostgreSQL: a group-commit batch answered UNAVAILABLE after %s\n",
              absl::FormatDuration(took).c_str());
}

TEST_F(HungDatabaseTest, ALeaderOnAFrozenServerStepsDownWithinItsProbeBound) {
  const store::LeaseOptions lease{.probe = absl::Milliseconds(500), .lease = absl::Seconds(4)};
  // db_->url(): the operator's URL with the network bounds (connect_timeout).
  store::LeaderLock leader(db_->url(), 4242, lease);
  ASSERT_TRUE(leader.TryAcquire());
  EXPECT_TRUE(leader.Holds());
  pg_.Freeze();
  const absl::Time start = absl::Now();
  EXPECT_FALSE(leader.TryAcquire());
  EXPECT_LT(absl::Now() - start, lease.probe + kSlack);
  EXPECT_FALSE(leader.Holds()) << "a lock it cannot prove is a lock it does not act on";

  store::PlacerLock placer(db_->url(), lease);
  absl::StatusOr<store::PlacerPoll> poll = placer.Poll("r1", "127.0.0.1:1");
  ASSERT_FALSE(poll.ok());
  ExpectDatabaseUnavailable(poll.status());
  EXPECT_FALSE(placer.Holds());
  pg_.Resume();
}

TEST_F(HungDatabaseTest, TheScalingElectionStepsDownOnItsOwnThreadAndLeadsAgainInANewTerm) {
  // The election probes on its own thread: its answer does not wait for a
  // scaling tick that is itself waiting on the frozen server.
  const store::LeaseOptions lease{.probe = absl::Milliseconds(500), .lease = absl::Seconds(4)};
  const absl::Duration interval = absl::Milliseconds(100);
  scheduler::ScalingElection election(db_->url(), 4444, interval, lease, nullptr);
  election.Start();
  ASSERT_EQ(election.LeaderTerm(), 1) << "Start probes once before it returns";
  pg_.Freeze();
  const absl::Time frozen = absl::Now();
  ASSERT_TRUE(testing::Eventually([&] { return !election.LeaderTerm().has_value(); }, 10));
  const absl::Duration stepped_down = absl::Now() - frozen;
  EXPECT_LT(stepped_down, interval + lease.probe + kSlack);
  pg_.Resume();
  // The session it abandoned ends with the thaw; the lock is free again.
  ASSERT_TRUE(testing::Eventually([&] { return election.LeaderTerm().has_value(); }, 15));
  EXPECT_EQ(election.LeaderTerm(), 2) << "a new term: the loop reloads what another leader kept";
  election.Stop();
  EXPECT_FALSE(election.LeaderTerm().has_value());
  std::printf("frozen PostgreSQL: the scaling election stepped down after %s\n",
              absl::FormatDuration(stepped_down).c_str());
}

TEST_F(HungDatabaseTest, TheServerReleasesALockOnlyAfterItsSilentHolderStoppedActing) {
  // The holder stops probing (a replica frozen, or cut off): it must stop
  // acting lease / 2 after its last probe began, and PostgreSQL must not
  // let another replica take the lock before `lease` after it.
  const store::LeaseOptions lease{.probe = absl::Milliseconds(500), .lease = absl::Seconds(3)};
  store::LeaderLock silent(db_->url(), 4343, lease);
  store::LeaderLock other(db_->url(), 4343, lease);
  const absl::Time probed = absl::Now();
  ASSERT_TRUE(silent.TryAcquire());
  ASSERT_FALSE(other.TryAcquire());
  absl::Time stopped_acting = absl::InfiniteFuture();
  absl::Time taken = absl::InfiniteFuture();
  ASSERT_TRUE(testing::Eventually(
      [&] {
        const bool acting = silent.Holds();
        if (!acting && stopped_acting == absl::InfiniteFuture()) stopped_acting = absl::Now();
        if (other.TryAcquire()) {
          taken = absl::Now();
          EXPECT_FALSE(acting) << "both would act";
          return true;
        }
        return false;
      },
      15));
  EXPECT_LE(stopped_acting - probed, lease.lease / 2 + kSlack);
  EXPECT_GE(taken - probed, lease.lease);
  std::printf("lease %s: the silent holder stopped acting %s after its last probe, the other "
              "took the lock %s after it\n",
              absl::FormatDuration(lease.lease).c_str(),
              absl::FormatDuration(stopped_acting - probed).c_str(),
              absl::FormatDuration(taken - probed).c_str());
}

TEST(UnreachableDatabase, EveryPathAnswersDatabaseUnavailableWithRetryInfo) {
  // Nothing listens there: connecting fails at once.
  const std::string url =
      absl::StrCat("postgresql://postgres@127.0.0.1:", testing::FreePort(), "/postgres");
  auto db = store::Database::Connect(url, 0, kBounds);
  ASSERT_TRUE(db.ok());
  ExpectDatabaseUnavailable(ReadOne(**db));
  absl::StatusOr<int> version = store::ReadSchemaVersion(**db);
  ASSERT_FALSE(version.ok());
  ExpectDatabaseUnavailable(version.status());
  {
    // The writer's own connection (commit_batcher.cc): the reason and
    // RetryInfo survive its "group commit: " prefix.
    store::CommitBatcher batcher(db->get(), {});
    store::WriteOutcome outcome = batcher.Run(AStop("w"));
    ExpectDatabaseUnavailable(outcome.status);
    EXPECT_THAT(outcome.status.message(), HasSubstr("group commit: "));
  }
  store::PlacerLock placer(url);
  absl::StatusOr<store::PlacerPoll> poll = placer.Poll("r1", "127.0.0.1:1");
  ASSERT_FALSE(poll.ok());
  ExpectDatabaseUnavailable(poll.status());
  auto connected = store::Database::Connect(url, 1, kBounds);
  ASSERT_FALSE(connected.ok());
  ExpectDatabaseUnavailable(connected.status());
}

}  // namespace
}  // namespace wsched
