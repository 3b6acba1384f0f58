#include "server/scaling/exec_actuator.h"

#include <unistd.h>

#include <fstream>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/scaling/test_scripts.h"

namespace wsched::scaling {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScriptDir;

PoolSignal Signal(int64_t generation, int target = 2) {
  return {.pool = "gpu-a100",
          .generation = generation,
          .current_size = 3,
          .target_size = target,
          .nodes_to_remove = {"node-a", "node-b"},
          .lost_nodes = {"node-c"},
          .reasons = {ScalingReason::kWarmBuffer, ScalingReason::kIdleTimeout},
          .detail = "removing idle nodes node-a, node-b"};
}

// Options that keep tests fast; the script is the whole command.
ExecActuatorOptions Fast(const std::string& script) {
  return {.command = {script},
          .timeout = absl::Seconds(10),
          .max_attempts = 3,
          .retry_initial = absl::Milliseconds(10),
          .retry_max = absl::Milliseconds(40),
          .stop_grace = absl::Milliseconds(200)};
}

std::unique_ptr<ExecActuator> Start(ExecActuatorOptions options) {
  auto actuator = ExecActuator::Create(std::move(options));
  EXPECT_TRUE(actuator.ok()) << actuator.status();
  return std::move(*actuator);
}

// Collects attempts reported from worker threads.
struct Attempts {
  absl::Mutex mu;
  std::vector<ActuatorAttempt> seen ABSL_GUARDED_BY(mu);
  std::function<void(const ActuatorAttempt&)> Callback() {
    return [this](const ActuatorAttempt& a) {
      absl::MutexLock lock(&mu);
      seen.push_back(a);
    };
  }
  std::vector<ActuatorAttempt> Get() {
    absl::MutexLock lock(&mu);
    return seen;
  }
  // True once `count` attempts have been reported.
  bool WaitFor(size_t count) {
    absl::MutexLock lock(&mu);
    auto reached = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return seen.size() >= count;
    };
    return mu.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }
};

TEST(BuildInvocationTest, PassesTheSignalAsEnvironmentAndArguments) {
  process::Command spec =
      BuildInvocation({"/bin/act", "--zone=z1"}, {{"ASG", "gpu-asg"}}, Signal(7));
  EXPECT_THAT(spec.argv, ElementsAre("/bin/act", "--zone=z1", "--pool=gpu-a100", "--generation=7",
                                     "--current=3", "--target=2", "--nodes-to-remove=node-a,node-b",
                                     "--reason=warm_buffer,idle_timeout"));
  EXPECT_THAT(spec.env, ::testing::Contains(std::pair<std::string, std::string>("ASG", "gpu-asg")));
  EXPECT_THAT(spec.env, ::testing::Contains(std::pair<std::string, std::string>(
                            "WSCHED_NODES_TO_REMOVE", "node-a,node-b")));
}

// The command inherits the test's environment; deploy/local/test.sh itself
// reads WSCHED_JOBS. Leave only what the actuator sets.
void UnsetInheritedWschedVariables() {
  std::vector<std::string> names;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string variable(*entry);
    if (variable.rfind("WSCHED_", 0) == 0) names.push_back(variable.substr(0, variable.find('=')));
  }
  for (const std::string& name : names) unsetenv(name.c_str());
}

TEST(ExecActuatorTest, CommandSeesTheSignalInItsEnvironmentAndArgs) {
  UnsetInheritedWschedVariables();
  ScriptDir dir;
  std::string script =
      dir.Script("record.sh", "env | grep '^WSCHED_' | sort > " + dir.Path("env.txt") +
                                  "\necho \"$@\" > " + dir.Path("args.txt"));
  auto actuator = Start(Fast(script));
  ASSERT_TRUE(actuator->Submit(Signal(7)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(dir.Read("env.txt"),
            "WSCHED_CURRENT_SIZE=3\n"
            "WSCHED_DETAIL=removing idle nodes node-a, node-b\n"
            "WSCHED_GENERATION=7\n"
            "WSCHED_LOST_NODES=node-c\n"
            "WSCHED_NODES_TO_REMOVE=node-a,node-b\n"
            "WSCHED_POOL=gpu-a100\n"
            "WSCHED_REASON=warm_buffer,idle_timeout\n"
            "WSCHED_TARGET_SIZE=2\n");
  EXPECT_EQ(dir.Read("args.txt"),
            "--pool=gpu-a100 --generation=7 --current=3 --target=2 "
            "--nodes-to-remove=node-a,node-b --reason=warm_buffer,idle_timeout\n");
  EXPECT_EQ(actuator->stats().succeeded, 1);
}

TEST(ExecActuatorTest, RetriesAFailureUntilItSucceeds) {
  ScriptDir dir;
  // Fails on the first run, succeeds on the second.
  std::string count = dir.Path("count");
  std::string script = dir.Script(
      "flaky.sh", "n=$(cat " + count + " 2>/dev/null || echo 0); n=$((n + 1)); echo $n > " + count +
                      "\nif [ $n -lt 2 ]; then echo throttled; exit 1; fi");
  Attempts attempts;
  ExecActuatorOptions options = Fast(script);
  options.on_attempt = attempts.Callback();
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  ExecActuatorStats stats = actuator->stats();
  EXPECT_EQ(stats.attempts, 2);
  EXPECT_EQ(stats.retries, 1);
  EXPECT_EQ(stats.succeeded, 1);
  EXPECT_EQ(stats.failed, 0);
  std::vector<ActuatorAttempt> seen = attempts.Get();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen[0].final);
  EXPECT_TRUE(absl::IsUnavailable(seen[0].status));
  EXPECT_THAT(seen[0].output_tail, HasSubstr("throttled"));
  EXPECT_TRUE(seen[1].final);
  EXPECT_TRUE(seen[1].status.ok());
  EXPECT_EQ(seen[1].attempt, 2);
}

TEST(ExecActuatorTest, GivesUpAfterMaxAttemptsAndCountsTheFailure) {
  ScriptDir dir;
  Attempts attempts;
  ExecActuatorOptions options = Fast(dir.Script("fail.sh", "exit 2"));
  options.on_attempt = attempts.Callback();
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(actuator->stats().attempts, 3);
  EXPECT_EQ(actuator->stats().failed, 1);
  ASSERT_EQ(attempts.Get().size(), 3u);
  EXPECT_TRUE(attempts.Get().back().final);
  // The same generation is tried again when submitted again (not applied).
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(actuator->stats().attempts, 6);
}

TEST(ExecActuatorTest, KillsACommandThatRunsPastTheTimeout) {
  ScriptDir dir;
  ExecActuatorOptions options = Fast(dir.Script("hang.sh", "sleep 30"));
  options.timeout = absl::Milliseconds(200);
  options.max_attempts = 1;
  Attempts attempts;
  options.on_attempt = attempts.Callback();
  auto actuator = Start(std::move(options));
  absl::Time start = absl::Now();
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(actuator->stats().timeouts, 1);
  EXPECT_EQ(actuator->stats().failed, 1);
  ASSERT_EQ(attempts.Get().size(), 1u);
  EXPECT_TRUE(absl::IsDeadlineExceeded(attempts.Get()[0].status));
}

TEST(ExecActuatorTest, ReportsTheEndOfTheOutputWithStderr) {
  ScriptDir dir;
  // 10 KB of progress, then the error on stderr: the report keeps the end.
  ExecActuatorOptions options =
      Fast(dir.Script("noisy.sh",
                      "head -c 10000 /dev/zero | tr '\\0' .\necho quota exceeded >&2\nexit 1"));
  options.max_attempts = 1;
  Attempts attempts;
  options.on_attempt = attempts.Callback();
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(attempts.WaitFor(1));
  std::string tail = attempts.Get()[0].output_tail;
  EXPECT_EQ(tail.size(), 4096u);
  EXPECT_THAT(tail, ::testing::EndsWith("....quota exceeded\n"));
  EXPECT_TRUE(absl::IsUnavailable(attempts.Get()[0].status));
  EXPECT_THAT(attempts.Get()[0].status.message(), HasSubstr("exit status 1"));
}

// A script that logs its start, waits until the test creates the file "go",
// and logs its end: the test decides when runs finish.
std::string GatedScript(const ScriptDir& dir, const std::string& what) {
  std::string log = dir.Path("log");
  return dir.Script("gated.sh", "echo start " + what + " >> " + log + "\nwhile [ ! -e " +
                                    dir.Path("go") + " ]; do sleep 0.01; done\necho end " + what +
                                    " >> " + log);
}

void Go(const ScriptDir& dir) { std::ofstream(dir.Path("go")) << "go\n"; }

TEST(ExecActuatorTest, RunsOfOnePoolNeverOverlapAndOnlyTheNewestWaitingRuns) {
  ScriptDir dir;
  ExecActuatorOptions options = Fast(GatedScript(dir, "$WSCHED_GENERATION"));
  options.workers = 4;
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(dir.WaitFor("log", "start 1"));
  for (int generation : {2, 3, 4}) ASSERT_TRUE(actuator->Submit(Signal(generation)).ok());
  // Idle workers must not pick up the pool while its run goes on. (Nothing
  // marks a worker deciding not to: the check can only give them time.)
  EXPECT_FALSE(dir.WaitFor("log", "start 4", absl::Milliseconds(100)));
  Go(dir);
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(dir.Read("log"), "start 1\nend 1\nstart 4\nend 4\n");
  EXPECT_EQ(actuator->stats().replaced, 2);
  EXPECT_EQ(actuator->stats().succeeded, 2);
}

TEST(ExecActuatorTest, DifferentPoolsRunSideBySide) {
  ScriptDir dir;
  auto actuator = Start(Fast(GatedScript(dir, "$WSCHED_POOL")));
  PoolSignal other = Signal(1);
  other.pool = "gpu-h100";
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(actuator->Submit(other).ok());
  // Both start before either may finish.
  EXPECT_TRUE(dir.WaitFor("log", "start gpu-a100"));
  EXPECT_TRUE(dir.WaitFor("log", "start gpu-h100"));
  Go(dir);
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(actuator->stats().succeeded, 2);
}

TEST(ExecActuatorTest, ANewerSignalReplacesAPendingRetry) {
  ScriptDir dir;
  std::string log = dir.Path("log");
  // Generation 1 always fails; later ones succeed.
  std::string script = dir.Script(
      "gen.sh", "echo $WSCHED_GENERATION >> " + log + "\n[ \"$WSCHED_GENERATION\" != 1 ]");
  ExecActuatorOptions options = Fast(script);
  options.retry_initial = absl::Seconds(30);  // Only a newer signal ends this wait.
  Attempts attempts;
  options.on_attempt = attempts.Callback();
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  // The failed first attempt is reported just before the retry pause.
  ASSERT_TRUE(attempts.WaitFor(1));
  ASSERT_TRUE(actuator->Submit(Signal(2)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(dir.Read("log"), "1\n2\n");
  std::vector<ActuatorAttempt> seen = attempts.Get();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_TRUE(absl::IsAborted(seen[1].status));
  EXPECT_TRUE(seen[1].final);
  EXPECT_TRUE(seen[2].status.ok());
  EXPECT_EQ(actuator->stats().failed, 0);
}

TEST(ExecActuatorTest, AnAppliedGenerationIsNotRunAgain) {
  ScriptDir dir;
  auto actuator = Start(Fast(dir.Script("ok.sh", "true")));
  ASSERT_TRUE(actuator->Submit(Signal(5)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  ASSERT_TRUE(actuator->Submit(Signal(5)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(actuator->stats().attempts, 1);
  EXPECT_EQ(actuator->stats().already_applied, 1);
}

TEST(ExecActuatorTest, RefusesSignalsItCannotPassOnSafely) {
  ScriptDir dir;
  auto actuator = Start(Fast(dir.Script("ok.sh", "true")));
  PoolSignal bad = Signal(1);
  bad.nodes_to_remove = {"a,b"};
  EXPECT_TRUE(absl::IsInvalidArgument(actuator->Submit(bad)));
  bad.nodes_to_remove = {""};
  EXPECT_TRUE(absl::IsInvalidArgument(actuator->Submit(bad)));
  bad = Signal(1);
  bad.lost_nodes = {"c d"};
  EXPECT_TRUE(absl::IsInvalidArgument(actuator->Submit(bad)));
  bad = Signal(1);
  bad.pool.clear();
  EXPECT_TRUE(absl::IsInvalidArgument(actuator->Submit(bad)));
  EXPECT_EQ(actuator->stats().rejected, 4);
}

TEST(ExecActuatorTest, RejectsBadOptions) {
  EXPECT_FALSE(ExecActuator::Create({}).ok());
  EXPECT_FALSE(ExecActuator::Create({.command = {"/bin/true"}, .max_attempts = 0}).ok());
  EXPECT_FALSE(ExecActuator::Create({.command = {"/bin/true"}, .workers = 0}).ok());
  EXPECT_FALSE(
      ExecActuator::Create({.command = {"/bin/true"}, .extra_env = {{"WSCHED_TARGET_SIZE", "9"}}})
          .ok());
}

TEST(ExecActuatorTest, StopEndsRunningCommandsAndWaitsForThem) {
  ScriptDir dir;
  ExecActuatorOptions options =
      Fast(dir.Script("long.sh", "echo started > " + dir.Path("started") + "\nsleep 30"));
  Attempts attempts;
  options.on_attempt = attempts.Callback();
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(dir.WaitFor("started", "started"));
  absl::Time start = absl::Now();
  actuator->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_EQ(attempts.Get().size(), 1u);
  EXPECT_TRUE(absl::IsCancelled(attempts.Get()[0].status));
  EXPECT_TRUE(absl::IsFailedPrecondition(actuator->Submit(Signal(2))));
  actuator->Stop();  // Idempotent.
}

TEST(ExecActuatorTest, AThrowingCallbackIsSurvived) {
  ScriptDir dir;
  ExecActuatorOptions options = Fast(dir.Script("ok.sh", "true"));
  options.on_attempt = [](const ActuatorAttempt&) { throw std::runtime_error("logger broke"); };
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(1)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(actuator->stats().succeeded, 1);
}

TEST(ExecActuatorTest, RunsTheFakeRegisterAgentsExample) {
  ExecActuatorOptions options =
      Fast(std::string(WSCHED_SOURCE_DIR) + "/deploy/actuators/fake-register-agents.sh");
  Attempts attempts;
  options.on_attempt = attempts.Callback();
  auto actuator = Start(std::move(options));
  ASSERT_TRUE(actuator->Submit(Signal(3)).ok());
  ASSERT_TRUE(actuator->WaitUntilIdle(absl::Seconds(10)));
  ASSERT_EQ(attempts.Get().size(), 1u);
  EXPECT_TRUE(attempts.Get()[0].status.ok()) << attempts.Get()[0].output_tail;
  EXPECT_THAT(attempts.Get()[0].output_tail, HasSubstr("gpu-a100"));
}

}  // namespace
}  // namespace wsched::scaling
