#include "server/cli/server_info.h"

#include <iostream>

#include <google/protobuf/descriptor.pb.h>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"

namespace wsched::cli {

namespace health = grpc::health::v1;
namespace reflection = grpc::reflection::v1alpha;

int Health(const Client& client) {
  auto stub = health::Health::NewStub(client.channel);
  auto context = client.Context();
  health::HealthCheckResponse response;
  grpc::Status status = stub->Check(context.get(), health::HealthCheckRequest(), &response);
  if (!status.ok()) {
    std::cerr << "health check failed: " << Describe(status) << "\n";
    return 1;
  }
  std::cout << "health: " << health::HealthCheckResponse::ServingStatus_Name(response.status())
            << "\n";
  return response.status() == health::HealthCheckResponse::SERVING ? 0 : 1;
}

int ListRpcs(const Client& client) {
  auto stub = reflection::ServerReflection::NewStub(client.channel);
  auto context = client.Context();
  auto stream = stub->ServerReflectionInfo(context.get());
  reflection::ServerReflectionRequest request;
  request.set_list_services("");
  reflection::ServerReflectionResponse response;
  if (!stream->Write(request) || !stream->Read(&response)) {
    std::cerr << "reflection unavailable: " << Describe(stream->Finish()) << "\n";
    return 1;
  }
  for (const auto& service : response.list_services_response().service()) {
    reflection::ServerReflectionRequest file_request;
    file_request.set_file_containing_symbol(service.name());
    reflection::ServerReflectionResponse file_response;
    if (!stream->Write(file_request) || !stream->Read(&file_response)) break;
    std::cout << service.name() << "\n";
    for (const auto& bytes : file_response.file_descriptor_response().file_descriptor_proto()) {
      google::protobuf::FileDescriptorProto file;
      if (!file.ParseFromString(bytes)) continue;
      for (const auto& svc : file.service()) {
        if (file.package() + "." + svc.name() != service.name()) continue;
        for (const auto& method : svc.method()) {
          std::cout << "  " << method.name() << (method.server_streaming() ? " (stream)" : "")
                    << "\n";
        }
      }
    }
  }
  stream->WritesDone();
  stream->Finish();
  return 0;
}

}  // namespace wsched::cli
