// A pool's scaling signal (scaling/scaling_signal.h) -> wsched.v1.PoolSignal.
// The scaling controller keeps and publishes core signals; the gRPC layer
// answers with this.
#ifndef WSCHED_SERVER_CONVERT_SCALING_CONVERT_H_
#define WSCHED_SERVER_CONVERT_SCALING_CONVERT_H_

#include "server/scaling/scaling_signal.h"
#include "wsched/v1/scaling.pb.h"

namespace wsched::convert {

v1::PoolSignal ToProto(const scaling::PoolSignal& signal);
v1::ScalingReason ToProto(scaling::ScalingReason reason);

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_SCALING_CONVERT_H_
