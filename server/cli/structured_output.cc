#include "server/cli/structured_output.h"

#include <cstdlib>
#include <iostream>

#include <google/protobuf/util/json_util.h>
#include <yaml-cpp/yaml.h>

#include "server/cli/output.h"

namespace wsched::cli {
namespace {

// Plain scalars YAML 1.1/1.2 readers resolve to something other than a string.
bool NeedsQuotes(const std::string& text) {
  if (text.empty()) return true;
  static const char* const kSpecial[] = {"~",   "null", "Null", "NULL", "true", "True", "TRUE",
                                         "false", "False", "FALSE", "yes", "Yes", "YES", "no",
                                         "No",  "NO",   "on",   "On",   "ON",   "off",  "Off",
                                         "OFF", "y",    "Y",    "n",    "N"};
  for (const char* special : kSpecial) {
    if (text == special) return true;
  }
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  if (end != nullptr && *end == '\0') return true;  // "123", "1e3", "0x1f", "inf"
  return text.front() == '.' || text.front() == '0';  // ".inf", "0o17"
}

void EmitString(YAML::Emitter& out, const std::string& text) {
  if (NeedsQuotes(text)) out << YAML::DoubleQuoted;
  out << text;
}

void Emit(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        EmitString(out, key);
        out << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::ordered_json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : value) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case nlohmann::ordered_json::value_t::string:
      EmitString(out, value.get<std::string>());
      break;
    case nlohmann::ordered_json::value_t::boolean:
      out << value.get<bool>();
      break;
    case nlohmann::ordered_json::value_t::number_integer:
      out << value.get<int64_t>();
      break;
    case nlohmann::ordered_json::value_t::number_unsigned:
      out << value.get<uint64_t>();
      break;
    case nlohmann::ordered_json::value_t::number_float:
      out << value.get<double>();
      break;
    default:
      out << YAML::Null;
      break;
  }
}

}  // namespace

std::string JsonToYaml(const nlohmann::ordered_json& json) {
  YAML::Emitter out;
  Emit(out, json);
  return out.c_str();
}

int PrintStructured(const google::protobuf::Message& message, const Options& options,
                    bool stream) {
  if (options.output != OutputFormat::kYaml) return PrintJson(message, /*one_line=*/stream);
  google::protobuf::util::JsonPrintOptions json_options;
  json_options.always_print_primitive_fields = true;
  json_options.preserve_proto_field_names = true;
  std::string text;
  auto status = google::protobuf::util::MessageToJsonString(message, &text, json_options);
  if (!status.ok()) {
    std::cerr << "cannot print the response as YAML: " << status.ToString() << "\n";
    return 1;
  }
  if (stream) std::cout << "---\n";
  std::cout << JsonToYaml(nlohmann::ordered_json::parse(text)) << std::endl;
  return 0;
}

int PrintStructured(const nlohmann::ordered_json& json, const Options& options) {
  if (options.output == OutputFormat::kYaml) {
    std::cout << JsonToYaml(json) << "\n";
  } else {
    std::cout << json.dump(2) << "\n";
  }
  return 0;
}

}  // namespace wsched::cli
