#include "server/cdi_hook/container_root.h"

#include <filesystem>

#include "nlohmann/json.hpp"

namespace wsched::cdi_hook {
namespace {

using Json = nlohmann::json;

std::optional<Json> ParseObject(const std::string& text) {
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  return json;
}

std::string StringField(const Json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string ContainerRoot(const std::string& state_json, const ReadFileFn& read_file,
                          std::string& error) {
  std::optional<Json> state = ParseObject(state_json);
  if (!state) {
    error = "the container state on stdin is not a JSON object";
    return "";
  }
  std::string bundle = StringField(*state, "bundle");
  if (bundle.empty() || bundle[0] != '/') {
    error = "the container state's \"bundle\" must be an absolute path";
    return "";
  }
  std::string config_path = bundle + "/config.json";
  std::optional<std::string> config_text = read_file(config_path);
  std::optional<Json> config = config_text ? ParseObject(*config_text) : std::nullopt;
  if (!config) {
    error = config_path + ": cannot be read as a JSON object";
    return "";
  }
  auto root = config->find("root");
  std::string path = root != config->end() && root->is_object() ? StringField(*root, "path") : "";
  if (path.empty()) {
    error = config_path + ": root.path is missing";
    return "";
  }
  std::filesystem::path resolved = path[0] == '/' ? std::filesystem::path(path)
                                                  : std::filesystem::path(bundle) / path;
  resolved = resolved.lexically_normal();
  std::string text = resolved.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  if (text == "/") {
    error = config_path + ": root.path is the host's \"/\"";
    return "";
  }
  return text;
}

}  // namespace wsched::cdi_hook
