// The tokens/identities file (read at start, on SIGHUP and on change):
// any text without crashing; an accepted file answers lookups.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/grpc/auth.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto auth = wsched::grpc_api::Authenticator::FromYaml(text);
  if (!auth.ok()) return 0;
  // Every line of the input doubles as a presented token and a certificate
  // identity: lookups must hold for whatever a caller sends.
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    wsched::grpc_api::CallerCredentials by_token;
    by_token.authorization = "Bearer " + line;
    (void)auth->Authorize(by_token, "/wsched.v1.ClassService/ListClasses");
    wsched::grpc_api::CallerCredentials by_cert;
    by_cert.certificate_identities = {line};
    auto principal = auth->Authorize(by_cert, "/wsched.v1.InventoryService/Heartbeat");
    if (principal.ok()) FUZZ_CHECK(!principal->roles.empty(), "a principal without a role");
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return 0;
}
