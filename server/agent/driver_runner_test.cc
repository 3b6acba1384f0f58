#include "server/agent/driver_runner.h"

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::agent {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

DriverJob Job() {
  return {"gpu-1", "6.1.0-18-amd64", "debian", "12", "550.54.15",
          "registry.example/driver:550-6.1.0-18-amd64-debian12"};
}

DriverRunnerOptions Options() {
  DriverRunnerOptions options;
  options.host_root = "/";
  options.cache = "/srv/driver-cache";
  options.timeout = absl::Minutes(30);
  return options;
}

TEST(PodmanRunArgv, PrivilegedWithTheHostsModulesSourcesAndCache) {
  const std::vector<std::string> argv = PodmanRunArgv(Options(), Job());
  const std::vector<std::string> start(argv.begin(), argv.begin() + 12);
  EXPECT_THAT(start, ElementsAre("podman", "run", "--rm", "--replace", "--name",
                                 "wsched-driver-install", "--privileged", "--network", "host",
                                 "--pull", "missing", "--timeout=1800"));
  EXPECT_THAT(argv, Contains("/lib/modules:/lib/modules"));
  EXPECT_THAT(argv, Contains("/usr/src:/usr/src"));
  EXPECT_THAT(argv, Contains("/srv/driver-cache:/var/cache/wsched-driver"));
  EXPECT_THAT(argv, Contains("WSCHED_DRIVER_CACHE=/var/cache/wsched-driver"));
  EXPECT_EQ(argv.back(), "registry.example/driver:550-6.1.0-18-amd64-debian12");
}

TEST(PodmanRunArgv, AFakeRootsTreeIsWhatIsMounted) {
  DriverRunnerOptions options = Options();
  options.host_root = "/tmp/tree/";
  options.podman = {"podman", "--root", "/tmp/storage"};
  options.extra_volumes = {"/tmp/tree/sys/module:/host/sys/module"};
  const std::vector<std::string> argv = PodmanRunArgv(options, Job());
  EXPECT_THAT(std::vector<std::string>(argv.begin(), argv.begin() + 4),
              ElementsAre("podman", "--root", "/tmp/storage", "run"));
  EXPECT_THAT(argv, Contains("/tmp/tree/lib/modules:/lib/modules"));
  EXPECT_THAT(argv, Contains("/tmp/tree/usr/src:/usr/src"));
  EXPECT_THAT(argv, Contains("/tmp/tree/sys/module:/host/sys/module"));
}

TEST(ContractEnvironment, NamesTheJob) {
  EXPECT_THAT(ContractEnvironment(Options(), Job()),
              ElementsAre(Pair("WSCHED_NODE", "gpu-1"), Pair("WSCHED_KERNEL", "6.1.0-18-amd64"),
                          Pair("WSCHED_OS", "debian12"), Pair("WSCHED_OS_ID", "debian"),
                          Pair("WSCHED_OS_VERSION", "12"),
                          Pair("WSCHED_DRIVER_VERSION", "550.54.15"),
                          Pair("WSCHED_IMAGE", Job().image),
                          Pair("WSCHED_DRIVER_CACHE", "/var/cache/wsched-driver"),
                          Pair("WSCHED_TIMEOUT_SECONDS", "1800")));
}

TEST(ContractEnvironment, AnObjectStoreCacheIsPassedAsItIsAndNotMounted) {
  DriverRunnerOptions options = Options();
  options.cache = "s3://drivers/cache";
  EXPECT_THAT(ContractEnvironment(options, Job()),
              Contains(Pair("WSCHED_DRIVER_CACHE", "s3://drivers/cache")));
  EXPECT_THAT(PodmanRunArgv(options, Job()), Not(Contains(HasSubstr(":/var/cache/wsched-driver"))));
  EXPECT_THAT(PodmanRunArgv(options, Job()), Not(Contains(::testing::StartsWith("s3:"))));
}

TEST(CacheReportIn, TheLastReportLineWins) {
  EXPECT_EQ(core::DriverCacheReportIn("building\n"), core::DriverCache::kUnknown);
  EXPECT_EQ(core::DriverCacheReportIn("wsched-driver-cache: miss\nbuilt\n"), core::DriverCache::kMiss);
  EXPECT_EQ(core::DriverCacheReportIn("wsched-driver-cache: miss\n  wsched-driver-cache: hit \n"),
            core::DriverCache::kHit);
  EXPECT_EQ(core::DriverCacheReportIn("wsched-driver-cache: maybe\n"), core::DriverCache::kUnknown);
  EXPECT_EQ(core::DriverCacheReportIn("echo wsched-driver-cache: hit\n"), core::DriverCache::kUnknown);
}

TEST(LogTail, TheLastLinesPrintableAndBounded) {
  EXPECT_EQ(LogTail("a\n\nb\tc\nd\n", 2), "b c | d");
  EXPECT_EQ(LogTail(""), "");
  const std::string tail = LogTail(std::string(5000, 'x') + "\nthe error\n", 20, 100);
  EXPECT_EQ(tail.size(), 100u);
  EXPECT_THAT(tail, HasSubstr("| the error"));
  EXPECT_EQ(tail.substr(0, 3), "...");
}

process::Result Exited(int code, std::string log, absl::Duration took = absl::Minutes(2)) {
  process::Result result;
  result.exit_code = code;
  result.out.text = std::move(log);
  result.took = took;
  return result;
}

TEST(OutcomeOf, ExitZeroIsInstalledWithTheCacheReport) {
  DriverInstallOutcome outcome =
      OutcomeOf(Job(), Exited(0, "wsched-driver-cache: hit\nloaded\n"), absl::Minutes(30));
  EXPECT_TRUE(outcome.succeeded);
  EXPECT_EQ(outcome.detail, "550.54.15");
  EXPECT_EQ(outcome.cache, core::DriverCache::kHit);
  EXPECT_EQ(outcome.took, absl::Minutes(2));
  EXPECT_EQ(outcome.log_tail, "wsched-driver-cache: hit | loaded");
}

TEST(OutcomeOf, AFailureSaysHowItEndedAndKeepsTheTail) {
  DriverInstallOutcome outcome =
      OutcomeOf(Job(), Exited(3, "make: *** [nvidia.ko] Error 1\n"), absl::Minutes(30));
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_EQ(outcome.detail, "exit status 3");
  EXPECT_EQ(outcome.log_tail, "make: *** [nvidia.ko] Error 1");
}

TEST(OutcomeOf, KilledAtTheTimeoutIsATimeout) {
  // podman's --timeout killed the container: the client exits 137.
  EXPECT_EQ(OutcomeOf(Job(), Exited(137, "", absl::Seconds(31)), absl::Seconds(30)).detail,
            "timed out after 30s");
  process::Result killed = Exited(-1, "", absl::Seconds(95));
  killed.timed_out = true;  // The agent's own deadline on the client.
  killed.signal = 9;
  EXPECT_EQ(OutcomeOf(Job(), killed, absl::Seconds(30)).detail, "timed out after 30s");
}

TEST(OutcomeOf, ARuntimeThatCannotStartIsAFailure) {
  DriverInstallOutcome outcome =
      OutcomeOf(Job(), absl::NotFoundError("podman: not found"), absl::Minutes(30));
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_EQ(outcome.detail, "the installer could not run: podman: not found");
}

TEST(RetryBackoff, DoublesPerJobUpToTheMaximum) {
  RetryBackoff backoff(absl::Minutes(1), absl::Minutes(5));
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_TRUE(backoff.Due(Job(), t0));
  EXPECT_EQ(backoff.Failed(Job(), t0), t0 + absl::Minutes(1));
  EXPECT_FALSE(backoff.Due(Job(), t0 + absl::Seconds(59)));
  EXPECT_TRUE(backoff.Due(Job(), t0 + absl::Minutes(1)));
  EXPECT_EQ(backoff.Failed(Job(), t0), t0 + absl::Minutes(2));
  EXPECT_EQ(backoff.Failed(Job(), t0), t0 + absl::Minutes(4));
  EXPECT_EQ(backoff.Failed(Job(), t0), t0 + absl::Minutes(5));
  EXPECT_EQ(backoff.Failed(Job(), t0), t0 + absl::Minutes(5));
  // A new kernel is a new job: at once.
  DriverJob upgraded = Job();
  upgraded.kernel = "6.1.0-20-amd64";
  EXPECT_TRUE(backoff.Due(upgraded, t0));
  backoff.Succeeded(Job());
  EXPECT_TRUE(backoff.Due(Job(), t0));
}

TEST(DriverInstaller, RunsOneJobAtATimeAndHandsItsOutcomeOnce) {
  absl::Notification release, finished;
  std::vector<std::vector<std::string>> commands;
  DriverRunnerOptions options = Options();
  options.log_dir = ::testing::TempDir();
  DriverInstaller installer(
      options,
      [&](const process::Command& command) -> absl::StatusOr<process::Result> {
        commands.push_back(command.argv);
        if (command.argv[1] == "run") release.WaitForNotification();
        EXPECT_EQ(command.keep, process::Keep::kTail);
        EXPECT_TRUE(command.merge_stderr);
        return Exited(0, "wsched-driver-cache: miss\n");
      },
      [&] { finished.Notify(); });
  ASSERT_TRUE(installer.Start(Job()));
  EXPECT_TRUE(installer.running());
  EXPECT_FALSE(installer.Start(Job()));
  EXPECT_EQ(installer.TakeFinished(), std::nullopt);
  release.Notify();
  finished.WaitForNotification();
  EXPECT_FALSE(installer.running());
  auto done = installer.TakeFinished();
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->first, Job());
  EXPECT_TRUE(done->second.succeeded);
  EXPECT_EQ(done->second.cache, core::DriverCache::kMiss);
  EXPECT_EQ(done->second.log_path,
            ::testing::TempDir() + "/driver-install-6.1.0-18-amd64.log");
  EXPECT_EQ(installer.TakeFinished(), std::nullopt);
  ASSERT_EQ(commands.size(), 1u);  // No cleanup after a run that ended by itself.
}

TEST(DriverInstaller, AKilledClientsContainerIsRemoved) {
  absl::Notification finished;
  std::vector<std::vector<std::string>> commands;
  DriverInstaller installer(
      Options(),
      [&](const process::Command& command) -> absl::StatusOr<process::Result> {
        commands.push_back(command.argv);
        process::Result result = Exited(-1, "", absl::Minutes(31));
        result.timed_out = true;
        return result;
      },
      [&] { finished.Notify(); });
  ASSERT_TRUE(installer.Start(Job()));
  finished.WaitForNotification();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_THAT(commands[1], ElementsAre("podman", "rm", "--force", "wsched-driver-install"));
  EXPECT_EQ(installer.TakeFinished()->second.detail, "timed out after 30m");
}

}  // namespace
}  // namespace wsched::agent
