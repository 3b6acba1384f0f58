#include "server/store/change_feed.h"

#include <chrono>
#include <optional>
#include <random>

#include <pqxx/pqxx>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/store/connection.h"

namespace wsched::store {
namespace {

class Receiver : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& connection, const std::function<void()>& on_change, bool own_too)
      : pqxx::notification_receiver(connection, kChangeChannel), on_change_(on_change),
        own_too_(own_too) {}
  void operator()(const std::string& payload, int) override {
    // "<replica>:<seq>": this replica's own entries are mirrored already.
    if (own_too_ || payload.compare(0, ReplicaId().size(), ReplicaId()) != 0) on_change_();
  }

 private:
  const std::function<void()>& on_change_;
  const bool own_too_;
};

}  // namespace

const std::string& ReplicaId() {
  static const std::string* id = [] {
    std::random_device random;
    return new std::string(absl::StrFormat("%08x%08x", random(), random()));
  }();
  return *id;
}

ChangeListener::ChangeListener(std::string url, absl::Duration probe,
                               std::function<void()> on_change, Hears hears)
    : url_(std::move(url)),
      probe_(probe),
      on_change_(std::move(on_change)),
      hears_(hears),
      thread_([this] { Run(); }) {}

bool ChangeListener::WaitUntilListening(absl::Duration timeout) {
  return listening_.WaitForNotificationWithTimeout(timeout);
}

ChangeListener::~ChangeListener() {
  stop_ = true;
  thread_.join();
}

void ChangeListener::Listen() {
  auto opened = OpenConnection(url_, "SET application_name = 'wsched change listener'", probe_);
  if (!opened.ok()) throw pqxx::broken_connection(std::string(opened.status().message()));
  Connection& connection = **opened;
  std::optional<Receiver> receiver;
  {
    BoundedCall call(connection, probe_);
    receiver.emplace(connection, on_change_, hears_ == Hears::kEveryReplica);  // LISTEN
  }
  if (listening_.HasBeenNotified()) {
    on_change_();  // A reconnect: anything may have changed meanwhile.
  } else {
    listening_.Notify();  // The caller reads its state after this.
  }
  absl::Time next_ping = absl::Now() + kPingEvery;
  while (!stop_) {
    connection.await_notification(0, 300'000);
    if (absl::Now() < next_ping) continue;
    BoundedCall call(connection, probe_);
    pqxx::nontransaction(connection).exec("SELECT 1");
    next_ping = absl::Now() + kPingEvery;
  }
  BoundedCall call(connection, probe_);
  receiver.reset();  // UNLISTEN: a shutdown must not wait on a hung server.
}

void ChangeListener::Run() {
  while (!stop_) {
    try {
      Listen();
    } catch (const std::exception&) {
      // Database unreachable: retry; refreshes resume when it is back.
      for (int i = 0; i < 10 && !stop_; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }
}

}  // namespace wsched::store
