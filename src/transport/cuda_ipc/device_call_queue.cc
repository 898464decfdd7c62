#include "transport/cuda_ipc/device_call_queue.h"

#include <algorithm>

namespace hoop {

DeviceCallQueue::~DeviceCallQueue() {
  for (SendStream& send : sendStreams_) {
    if (send.stream == nullptr) continue;
    runtime_.destroyEvent(send.ready);
    runtime_.destroyEvent(send.done);
    runtime_.destroyStream(send.stream);
  }
}

DeviceCallQueue::SendStream& DeviceCallQueue::sendStreamFor(int peer) {
  const auto index = static_cast<size_t>(peer);
  if (sendStreams_.size() <= index) sendStreams_.resize(index + 1);
  SendStream& send = sendStreams_[index];
  if (send.stream == nullptr) {
    send.stream = runtime_.createStream();
    send.ready = runtime_.createEvent();
    send.done = runtime_.createEvent();
  }
  return send;
}

bool DeviceCallQueue::readsRecorded(const char* data, size_t bytes) const {
  return std::any_of(recorded_.begin(), recorded_.end(), [&](const Recorded& r) {
    return data < r.data + r.bytes && r.data < data + bytes;
  });
}

void DeviceCallQueue::postSend(int peer, DeviceSlotLink& connection, const void* data,
                               size_t bytes) {
  const auto* from = static_cast<const char*>(data);
  if (readsRecorded(from, bytes)) flush();
  SendStream& send = sendStreamFor(peer);
  runtime_.recordEvent(send.ready, stream_);
  runtime_.streamWaitEvent(send.stream, send.ready);
  send.used = true;
  for (size_t done = 0; done < bytes;) {
    const size_t piece = std::min(connection.slotBytes(), bytes - done);
    connection.enqueueSendPiece(from + done, piece, send.stream);
    done += piece;
  }
}

void DeviceCallQueue::postRecv(DeviceSlotLink& connection, void* data, size_t bytes) {
  recorded_.push_back({&connection, static_cast<char*>(data), bytes});
}

void DeviceCallQueue::flush() {
  while (!recorded_.empty()) {
    const Recorded r = recorded_.front();
    recorded_.pop_front();
    for (size_t done = 0; done < r.bytes;) {
      const size_t piece = std::min(r.connection->slotBytes(), r.bytes - done);
      r.connection->enqueueRecvPiece(r.data + done, piece);
      done += piece;
    }
  }
}

void DeviceCallQueue::join(SendStream& send) {
  if (!send.used) return;
  runtime_.recordEvent(send.done, send.stream);
  runtime_.streamWaitEvent(stream_, send.done);
  send.used = false;
}

void DeviceCallQueue::joinSends() {
  flush();
  for (SendStream& send : sendStreams_) join(send);
}

void DeviceCallQueue::joinSendsTo(int peer) {
  // The recorded receives first: an exchange's partner may need them to free the slots this
  // rank's send waits for.
  flush();
  if (static_cast<size_t>(peer) < sendStreams_.size())
    join(sendStreams_[static_cast<size_t>(peer)]);
}

}  // namespace hoop
