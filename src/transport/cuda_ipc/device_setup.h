// Building a DeviceConnection between two ranks of one host, over the pair's setup channel: each
// rank allocates its receive ring in device memory and exports it; the lower rank creates the
// flags' host segment (both directions) and sends its name with its ring; the higher rank maps
// both and answers with its ring; the lower rank maps that, unlinks the segment's name (from
// then on a crash leaves nothing in /dev/shm) and confirms. A side that fails sends its reason
// first, so the other fails too instead of waiting on the channel.
#pragma once

#include <memory>

#include "device/device_runtime.h"
#include "transport/cuda_ipc/device_call_queue.h"
#include "transport/cuda_ipc/device_connection.h"
#include "transport/setup_channel.h"
#include "transport/transport.h"

namespace hoop {

// Both ranks call it with each other's pair and the same shape. The connection enqueues on
// `queue`'s stream and must not outlive it.
std::unique_ptr<DeviceConnection> connectDevice(const PeerPair& pair, SetupChannel& channel,
                                                DeviceSlotShape shape, DeviceCallQueue& queue);

}  // namespace hoop
