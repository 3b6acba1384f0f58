// google.protobuf.Timestamp -> absl::Time for the time bounds a request
// names (a listing's range).
#ifndef WSCHED_SERVER_CONVERT_TIME_CONVERT_H_
#define WSCHED_SERVER_CONVERT_TIME_CONVERT_H_

#include <google/protobuf/timestamp.pb.h>

#include "absl/time/time.h"

namespace wsched::convert {

// To the nanosecond, as sent: the store rounds to its microseconds, and a
// page token records the bound as the caller wrote it (app/listing_filter.h).
inline absl::Time TimeFromProto(const google::protobuf::Timestamp& timestamp) {
  return absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
}

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_TIME_CONVERT_H_
