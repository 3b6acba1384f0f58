#include "server/grpc/reflection_v1.h"

#include <google/protobuf/descriptor.pb.h>

#include "absl/strings/str_cat.h"

namespace wsched::grpc_api {
namespace {

namespace v1 = grpc::reflection::v1;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;

void SetError(ReflectionV1Service::Response& response, grpc::StatusCode code,
              const std::string& message) {
  response.mutable_error_response()->set_error_code(code);
  response.mutable_error_response()->set_error_message(message);
}

// `file` and what it imports, transitively, skipping files in `sent` (and
// adding the rest to it); the requested file comes first.
void AddFileAndImports(const FileDescriptor* file, std::unordered_set<std::string>* sent,
                       v1::FileDescriptorResponse* out) {
  std::vector<const FileDescriptor*> todo = {file};
  while (!todo.empty()) {
    const FileDescriptor* next = todo.back();
    todo.pop_back();
    if (!sent->insert(next->name()).second) continue;
    google::protobuf::FileDescriptorProto proto;
    next->CopyTo(&proto);
    proto.SerializeToString(out->add_file_descriptor_proto());
    for (int i = next->dependency_count() - 1; i >= 0; --i) todo.push_back(next->dependency(i));
  }
}

}  // namespace

ReflectionV1Service::ReflectionV1Service(std::vector<std::string> services,
                                         const google::protobuf::DescriptorPool* pool)
    : services_(std::move(services)), pool_(pool) {}

ReflectionV1Service::Response ReflectionV1Service::Answer(
    const Request& request, std::unordered_set<std::string>* sent) const {
  Response response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  auto send_file = [&](const FileDescriptor* file, const std::string& missing) {
    if (file == nullptr) {
      SetError(response, grpc::StatusCode::NOT_FOUND, missing);
      return;
    }
    // The file asked for is always in the answer (an empty answer reads
    // as "none" to some clients); only its imports sent before are skipped.
    sent->erase(file->name());
    AddFileAndImports(file, sent, response.mutable_file_descriptor_response());
  };
  switch (request.message_request_case()) {
    case Request::kFileByFilename:
      send_file(pool_->FindFileByName(request.file_by_filename()),
                absl::StrCat("file not found: ", request.file_by_filename()));
      break;
    case Request::kFileContainingSymbol:
      send_file(pool_->FindFileContainingSymbol(request.file_containing_symbol()),
                absl::StrCat("symbol not found: ", request.file_containing_symbol()));
      break;
    case Request::kFileContainingExtension: {
      const auto& ask = request.file_containing_extension();
      const Descriptor* type = pool_->FindMessageTypeByName(ask.containing_type());
      const FieldDescriptor* extension =
          type == nullptr ? nullptr : pool_->FindExtensionByNumber(type, ask.extension_number());
      send_file(extension == nullptr ? nullptr : extension->file(),
                absl::StrCat("extension not found: ", ask.containing_type(), " field ",
                             ask.extension_number()));
      break;
    }
    case Request::kAllExtensionNumbersOfType: {
      const Descriptor* type = pool_->FindMessageTypeByName(request.all_extension_numbers_of_type());
      if (type == nullptr) {
        SetError(response, grpc::StatusCode::NOT_FOUND,
                 absl::StrCat("type not found: ", request.all_extension_numbers_of_type()));
        break;
      }
      std::vector<const FieldDescriptor*> extensions;
      pool_->FindAllExtensions(type, &extensions);
      auto* numbers = response.mutable_all_extension_numbers_response();
      numbers->set_base_type_name(type->full_name());
      for (const FieldDescriptor* extension : extensions) {
        numbers->add_extension_number(extension->number());
      }
      break;
    }
    case Request::kListServices:
      for (const std::string& name : services_) {
        response.mutable_list_services_response()->add_service()->set_name(name);
      }
      break;
    case Request::MESSAGE_REQUEST_NOT_SET:
      SetError(response, grpc::StatusCode::INVALID_ARGUMENT,
               "message_request: one of file_by_filename, file_containing_symbol, "
               "file_containing_extension, all_extension_numbers_of_type, list_services is "
               "required");
      break;
  }
  return response;
}

grpc::Status ReflectionV1Service::ServerReflectionInfo(
    grpc::ServerContext* /*context*/, grpc::ServerReaderWriter<Response, Request>* stream) {
  std::unordered_set<std::string> sent;
  Request request;
  while (stream->Read(&request)) {
    if (!stream->Write(Answer(request, &sent))) break;
  }
  return grpc::Status::OK;
}

}  // namespace wsched::grpc_api
