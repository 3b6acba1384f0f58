#include "tests/support/fake_agent.h"

#include <chrono>
#include <utility>

#include "gtest/gtest.h"
#include "tests/support/server_process.h"

namespace wsched::testing {

FakeAgent::FakeAgent(std::shared_ptr<grpc::Channel> channel, v1::NodeInfo node)
    : stub_(v1::InventoryService::NewStub(channel)), node_(std::move(node)) {
  thread_ = std::thread([this] { Loop(); });
}

FakeAgent::~FakeAgent() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void FakeAgent::Set(const std::string& uuid, int percent) {
  std::lock_guard<std::mutex> lock(mu_);
  utilization_[uuid] = percent;
}

void FakeAgent::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    v1::HeartbeatRequest request;
    request.set_node_name(node_.name());
    request.set_kernel_version(node_.kernel_version());
    request.set_driver_version(node_.driver_version());
    for (const auto& [uuid, percent] : utilization_) {
      v1::GpuUsage* usage = request.add_gpu_usage();
      usage->set_uuid(uuid);
      usage->set_utilization_percent(percent);
      usage->set_memory_used_bytes(int64_t{1} << 30);
    }
    lock.unlock();
    grpc::ClientContext context;
    Authorize(context, kAgentToken);
    v1::HeartbeatResponse response;
    grpc::Status status = stub_->Heartbeat(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    lock.lock();
    // The agent's cadence, not a wait for an outcome.
    wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
  }
}

}  // namespace wsched::testing
