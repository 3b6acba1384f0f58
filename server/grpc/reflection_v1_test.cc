#include "server/grpc/reflection_v1.h"

#include <google/protobuf/descriptor.pb.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wsched/v1/placement.pb.h"

namespace wsched::grpc_api {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using Request = ReflectionV1Service::Request;

std::vector<std::string> FileNames(const ReflectionV1Service::Response& response) {
  std::vector<std::string> names;
  for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto proto;
    EXPECT_TRUE(proto.ParseFromString(bytes));
    names.push_back(proto.name());
  }
  return names;
}

class ReflectionV1Test : public ::testing::Test {
 protected:
  // Links the generated placement messages into this binary's pool.
  ReflectionV1Test() { (void)wsched::v1::PlaceWorkspaceRequest::descriptor(); }
  ReflectionV1Service service_{{"wsched.v1.PlacementService", "grpc.reflection.v1.ServerReflection"}};
  std::unordered_set<std::string> sent_;
};

TEST_F(ReflectionV1Test, ListsTheServicesItWasGiven) {
  Request request;
  request.set_list_services("");
  auto response = service_.Answer(request, &sent_);
  ASSERT_TRUE(response.has_list_services_response());
  std::vector<std::string> names;
  for (const auto& service : response.list_services_response().service()) names.push_back(service.name());
  EXPECT_THAT(names, ElementsAre("wsched.v1.PlacementService", "grpc.reflection.v1.ServerReflection"));
  EXPECT_TRUE(response.original_request().has_list_services());
}

TEST_F(ReflectionV1Test, FileContainingASymbolComesFirstWithItsImportsOnce) {
  Request request;
  request.set_file_containing_symbol("wsched.v1.PlacementService");
  auto first = FileNames(service_.Answer(request, &sent_));
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front(), "wsched/v1/placement.proto");
  EXPECT_THAT(first, Contains("wsched/v1/common.proto"));
  // Asked again on the same stream: the file itself, not its imports.
  request.set_file_containing_symbol("wsched.v1.PlaceWorkspaceRequest");
  EXPECT_THAT(FileNames(service_.Answer(request, &sent_)), ElementsAre("wsched/v1/placement.proto"));
}

TEST_F(ReflectionV1Test, FileByName) {
  Request request;
  request.set_file_by_filename("wsched/v1/common.proto");
  auto names = FileNames(service_.Answer(request, &sent_));
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "wsched/v1/common.proto");
}

TEST_F(ReflectionV1Test, UnknownNamesAnswerNotFoundNamingWhat) {
  Request request;
  request.set_file_containing_symbol("wsched.v1.NoSuchService");
  auto response = service_.Answer(request, &sent_);
  ASSERT_TRUE(response.has_error_response());
  EXPECT_EQ(response.error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(response.error_response().error_message(), "symbol not found: wsched.v1.NoSuchService");
  request.set_file_by_filename("nope.proto");
  EXPECT_EQ(service_.Answer(request, &sent_).error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  request.set_all_extension_numbers_of_type("wsched.v1.Nope");
  EXPECT_EQ(service_.Answer(request, &sent_).error_response().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ReflectionV1Test, AnEmptyRequestIsInvalid) {
  auto response = service_.Answer(Request(), &sent_);
  EXPECT_EQ(response.error_response().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ReflectionV1Test, ExtensionNumbersOfATypeWithoutExtensionsIsEmpty) {
  Request request;
  request.set_all_extension_numbers_of_type("wsched.v1.PlaceWorkspaceRequest");
  auto response = service_.Answer(request, &sent_);
  ASSERT_TRUE(response.has_all_extension_numbers_response());
  EXPECT_EQ(response.all_extension_numbers_response().base_type_name(),
            "wsched.v1.PlaceWorkspaceRequest");
  EXPECT_EQ(response.all_extension_numbers_response().extension_number_size(), 0);
}

}  // namespace
}  // namespace wsched::grpc_api
