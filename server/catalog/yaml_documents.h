// Reading a YAML stream's documents without yaml-cpp's LoadAll, which never
// returns on some malformed input: a lone "," makes yaml-cpp 0.7 (Debian
// 12) produce empty documents forever, allocating until the process dies
// (jbeder/yaml-cpp#1040, fixed upstream after 0.8). Found by
// tests/fuzz/catalog_fuzz.cc.
#ifndef WSCHED_SERVER_CATALOG_YAML_DOCUMENTS_H_
#define WSCHED_SERVER_CATALOG_YAML_DOCUMENTS_H_

#include <string>

#include <yaml-cpp/yaml.h>

namespace wsched::catalog {

struct YamlDocuments {
  int count = 0;       // Documents in the stream.
  YAML::Node first;    // The first one, when count >= 1.
};

// Throws YAML::ParserException (as LoadAll does) for malformed YAML,
// including input where the parser stops making progress.
YamlDocuments LoadYamlDocuments(const std::string& text);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_YAML_DOCUMENTS_H_
