#include "server/convert/catalog_convert.h"

namespace wsched::convert {
namespace {

v1::CatalogChange::Kind KindOf(catalog::ChangeKind kind) {
  switch (kind) {
    case catalog::ChangeKind::kAdd: return v1::CatalogChange::KIND_ADD;
    case catalog::ChangeKind::kUpdate: return v1::CatalogChange::KIND_UPDATE;
    case catalog::ChangeKind::kRemove: return v1::CatalogChange::KIND_REMOVE;
    case catalog::ChangeKind::kDeprecate: return v1::CatalogChange::KIND_DEPRECATE;
  }
  return v1::CatalogChange::KIND_UNSPECIFIED;
}

}  // namespace

v1::CatalogChange ToProto(const catalog::CatalogChange& change) {
  v1::CatalogChange out;
  out.set_kind(KindOf(change.kind));
  out.set_object(catalog::ObjectKindName(change.object));
  out.set_id(change.id);
  out.set_detail(change.detail);
  return out;
}

v1::ClassSource ToProto(core::ClassSource source) {
  switch (source) {
    case core::ClassSource::kRequest: return v1::CLASS_SOURCE_REQUEST;
    case core::ClassSource::kPrevious: return v1::CLASS_SOURCE_PREVIOUS;
    case core::ClassSource::kProjectDefault: return v1::CLASS_SOURCE_PROJECT_DEFAULT;
    case core::ClassSource::kOrgDefault: return v1::CLASS_SOURCE_ORG_DEFAULT;
    case core::ClassSource::kInstallationDefault: return v1::CLASS_SOURCE_INSTALLATION_DEFAULT;
  }
  return v1::CLASS_SOURCE_UNSPECIFIED;
}

v1::ResolveClassResponse ToProto(const core::ClassResolution& resolution) {
  v1::ResolveClassResponse out;
  out.set_class_id(resolution.class_id);
  out.set_source(ToProto(resolution.source));
  out.set_explanation(resolution.explanation);
  for (const auto& skipped : resolution.skipped) out.add_skipped(skipped);
  return out;
}

}  // namespace wsched::convert
