#include "server/catalog/yaml_documents.h"

#include <sstream>

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>

namespace wsched::catalog {
namespace {

// Counts documents and remembers where each starts; nothing else is kept.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    previous_ = last_;
    last_ = mark;
    ++count_;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  int count() const { return count_; }
  const YAML::Mark& last() const { return last_; }
  // A document that starts where the one before it started consumed
  // nothing: the parser is stuck and would go on forever.
  bool stuck() const { return count_ >= 2 && previous_.pos == last_.pos; }

 private:
  int count_ = 0;
  YAML::Mark previous_ = YAML::Mark::null_mark();
  YAML::Mark last_ = YAML::Mark::null_mark();
};

}  // namespace

YamlDocuments LoadYamlDocuments(const std::string& text) {
  std::stringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts)) {
    if (starts.stuck()) {
      throw YAML::ParserException(starts.last(), "cannot be read as YAML from here on");
    }
  }
  YamlDocuments documents;
  documents.count = starts.count();
  // One pass found the stream well-formed; Load builds the first document.
  if (documents.count >= 1) documents.first = YAML::Load(text);
  return documents;
}

}  // namespace wsched::catalog
