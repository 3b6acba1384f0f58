// Catalog changes and class resolutions <-> wsched.v1 messages.
#ifndef WSCHED_SERVER_CONVERT_CATALOG_CONVERT_H_
#define WSCHED_SERVER_CONVERT_CATALOG_CONVERT_H_

#include "server/catalog/diff.h"
#include "server/core/class_resolution.h"
#include "wsched/v1/classes.pb.h"
#include "wsched/v1/settings.pb.h"

namespace wsched::convert {

v1::CatalogChange ToProto(const catalog::CatalogChange& change);
v1::ClassSource ToProto(core::ClassSource source);
v1::ResolveClassResponse ToProto(const core::ClassResolution& resolution);

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_CATALOG_CONVERT_H_
