#include "server/replica/drain_requests.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::replica {
namespace {

using ::testing::UnorderedElementsAre;

TEST(DrainRequestsTest, TheFirstDrainTriesEverythingThenOnlyWhatWasAskedFor) {
  DrainRequests requests;
  EXPECT_TRUE(requests.Take().everything);
  DrainRequests::Scope none = requests.Take();
  EXPECT_FALSE(none.everything);
  EXPECT_TRUE(none.pools.empty());

  requests.Pool("gpu-h100");
  requests.Pool("cpu");
  requests.Pool("gpu-h100");
  DrainRequests::Scope asked = requests.Take();
  EXPECT_FALSE(asked.everything);
  EXPECT_THAT(asked.pools, UnorderedElementsAre("gpu-h100", "cpu"));
  EXPECT_TRUE(requests.Take().pools.empty()) << "taking clears";

  requests.Everything();
  EXPECT_TRUE(requests.Take().everything);
}

TEST(DrainRequestsTest, AwaitWakesForARequestAndSaysWhetherOneCame) {
  DrainRequests requests;
  EXPECT_FALSE(requests.Await(absl::Milliseconds(1)));
  std::thread asker([&] { requests.Pool("gpu"); });
  // Woken by the request, not the timeout: an hour would fail the test's deadline.
  EXPECT_TRUE(requests.Await(absl::Hours(1)));
  asker.join();
  EXPECT_FALSE(requests.Await(absl::Milliseconds(1))) << "one wake per request";
  EXPECT_THAT(requests.Take().pools, UnorderedElementsAre("gpu")) << "the request stays for Take";
}

TEST(DrainRequestsTest, StopWakesTheLoop) {
  DrainRequests requests;
  std::thread stopper([&] { requests.Stop(); });
  requests.Await(absl::Hours(1));
  stopper.join();
  EXPECT_TRUE(requests.stopping());
}

}  // namespace
}  // namespace wsched::replica
