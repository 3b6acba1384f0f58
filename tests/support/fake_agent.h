// A node's agent for tests: heartbeats every 200 ms with the utilisation
// set for each of its GPUs (GPUs without one are left out of the
// heartbeat, as an agent whose nvidia-smi does not see them would), until
// it is destroyed.
#ifndef WSCHED_TESTS_SUPPORT_FAKE_AGENT_H_
#define WSCHED_TESTS_SUPPORT_FAKE_AGENT_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::testing {

class FakeAgent {
 public:
  FakeAgent(std::shared_ptr<grpc::Channel> channel, v1::NodeInfo node);
  ~FakeAgent();
  FakeAgent(const FakeAgent&) = delete;
  FakeAgent& operator=(const FakeAgent&) = delete;

  // From the next heartbeat on, GPU `uuid` reports `percent` utilisation.
  void Set(const std::string& uuid, int percent);

 private:
  void Loop();

  std::unique_ptr<v1::InventoryService::Stub> stub_;
  const v1::NodeInfo node_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, int> utilization_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_FAKE_AGENT_H_
