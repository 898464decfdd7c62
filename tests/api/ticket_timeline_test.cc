// Per-operation completion on non-blocking communicators (hoopCommQueueTicket,
// hoopCommWaitTicket) and the timeline (hoopTimelineStart/Stop, base/timeline.h), with ranks as
// threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/timeline.h"
#include "hoop/hoop.h"

namespace {

// Two non-blocking ranks of one job, ready to use.
struct NonBlockingPair {
  hoopComm_t comms[2] = {};
  NonBlockingPair() {
    hoopUniqueId id;
    EXPECT_EQ(hoopGetUniqueId(&id), hoopSuccess);
    hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
    config.blocking = 0;
    for (int rank = 0; rank < 2; ++rank) {
      EXPECT_EQ(hoopCommInitRankConfig(&comms[rank], 2, id, rank, &config), hoopInProgress);
    }
    for (hoopComm_t comm : comms) {
      hoopResult_t state = hoopInProgress;
      while (hoopCommGetAsyncError(comm, &state) == hoopSuccess && state == hoopInProgress) {
        std::this_thread::yield();
      }
      EXPECT_EQ(state, hoopSuccess) << hoopGetLastError(comm);
    }
  }
  ~NonBlockingPair() {
    for (hoopComm_t comm : comms) {
      if (comm != nullptr) hoopCommDestroy(comm);
    }
  }
};

TEST(Ticket, EachCallEndsOnItsOwnTicketWhileLaterOnesAreStillQueued) {
  NonBlockingPair pair;
  std::vector<int32_t> first[2] = {std::vector<int32_t>(1000, 1), std::vector<int32_t>(1000, 2)};
  std::vector<int32_t> second[2] = {std::vector<int32_t>(10, 5), std::vector<int32_t>(10, 7)};
  uint64_t tickets[2][2] = {};
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_EQ(hoopAllReduce(first[rank].data(), first[rank].data(), 1000, hoopInt32, hoopSum,
                            pair.comms[rank], nullptr),
              hoopInProgress);
    ASSERT_EQ(hoopCommQueueTicket(pair.comms[rank], &tickets[rank][0]), hoopSuccess);
  }
  // Rank 0 queues its second call; rank 1 has not, so that one cannot end.
  ASSERT_EQ(hoopAllReduce(second[0].data(), second[0].data(), 10, hoopInt32, hoopSum, pair.comms[0],
                          nullptr),
            hoopInProgress);
  ASSERT_EQ(hoopCommQueueTicket(pair.comms[0], &tickets[0][1]), hoopSuccess);
  EXPECT_EQ(tickets[0][1], tickets[0][0] + 1);
  EXPECT_EQ(hoopCommWaitTicket(pair.comms[0], tickets[0][0], -1), hoopSuccess)
      << hoopGetLastError(nullptr);
  EXPECT_EQ(first[0], std::vector<int32_t>(1000, 3));
  EXPECT_EQ(hoopCommWaitTicket(pair.comms[0], tickets[0][1], 50), hoopInProgress);
  ASSERT_EQ(hoopAllReduce(second[1].data(), second[1].data(), 10, hoopInt32, hoopSum, pair.comms[1],
                          nullptr),
            hoopInProgress);
  ASSERT_EQ(hoopCommQueueTicket(pair.comms[1], &tickets[1][1]), hoopSuccess);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(hoopCommWaitTicket(pair.comms[rank], tickets[rank][1], -1), hoopSuccess)
        << hoopGetLastError(nullptr);
    EXPECT_EQ(second[rank], std::vector<int32_t>(10, 12));
  }
  EXPECT_EQ(first[1], std::vector<int32_t>(1000, 3));
}

TEST(Ticket, AFailedCallFailsItsTicketAndNamesThePeer) {
  setenv("HOOP_TIMEOUT", "1", 1);
  {
    NonBlockingPair pair;
    float value = 1;
    ASSERT_EQ(hoopAllReduce(&value, &value, 1, hoopFloat32, hoopSum, pair.comms[0], nullptr),
              hoopInProgress);
    uint64_t ticket = 0;
    ASSERT_EQ(hoopCommQueueTicket(pair.comms[0], &ticket), hoopSuccess);
    // Rank 1 never joins: the call times out on hoop's thread and its ticket says so.
    const hoopResult_t result = hoopCommWaitTicket(pair.comms[0], ticket, 10000);
    EXPECT_EQ(result, hoopTimeout);
    const std::string message = hoopGetLastError(nullptr);
    EXPECT_NE(message.find("allreduce"), std::string::npos) << message;
    EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
  }
  unsetenv("HOOP_TIMEOUT");
}

TEST(Ticket, BlockingCommunicatorsHaveEndedCalls) {
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  hoopComm_t comm = nullptr;
  ASSERT_EQ(hoopCommInitRank(&comm, 1, id, 0), hoopSuccess);
  uint64_t ticket = 99;
  EXPECT_EQ(hoopCommQueueTicket(comm, &ticket), hoopSuccess);
  EXPECT_EQ(ticket, 0u);
  EXPECT_EQ(hoopCommWaitTicket(comm, ticket, 0), hoopSuccess);
  EXPECT_EQ(hoopCommQueueTicket(comm, nullptr), hoopInvalidArgument);
  EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Timeline, PathsGetTheRankBeforeTheExtension) {
  EXPECT_EQ(hoop::timelinePathForRank("/tmp/trace.json", 3), "/tmp/trace.3.json");
  EXPECT_EQ(hoop::timelinePathForRank("/tmp.d/trace", 0), "/tmp.d/trace.0");
}

TEST(Timeline, EveryCallIsAnEventAndTheFileIsCompleteAtEveryMoment) {
  const std::string base = testing::TempDir() + "hoop-timeline-" + std::to_string(getpid());
  ASSERT_EQ(hoopTimelineStart((base + ".json").c_str(), 0), hoopSuccess)
      << hoopGetLastError(nullptr);
  const std::string path = base + ".0.json";
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  hoopComm_t comm = nullptr;
  ASSERT_EQ(hoopCommInitRank(&comm, 1, id, 0), hoopSuccess);
  float data[256] = {};
  ASSERT_EQ(hoopAllReduce(data, data, 256, hoopFloat32, hoopSum, comm, nullptr), hoopSuccess);
  std::string text = readFile(path);
  // Complete before anything is closed: the trailer follows the last event.
  EXPECT_EQ(text.substr(text.size() - 4), "\n]}\n");
  EXPECT_NE(text.find("\"name\":\"allreduce\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"bytes\":\"1024\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"schedule\":"), std::string::npos) << text;
  EXPECT_NE(text.find("\"dur\":"), std::string::npos) << text;
  ASSERT_EQ(hoopBroadcast(data, data, 4, hoopFloat32, 0, comm, nullptr), hoopSuccess);
  EXPECT_EQ(hoopCommAbort(comm), hoopSuccess);
  text = readFile(path);
  EXPECT_NE(text.find("\"name\":\"broadcast\""), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\n]}\n");
  EXPECT_EQ(hoopTimelineStop(), hoopSuccess);
  EXPECT_FALSE(hoop::timelineOn());
  EXPECT_EQ(hoopTimelineStart("/nonexistent-dir/trace.json", 0), hoopSystemError);
  EXPECT_NE(std::string(hoopGetLastError(nullptr)).find("/nonexistent-dir/trace.0.json"),
            std::string::npos);
  unlink(path.c_str());
}

TEST(Timeline, AFailedCallIsAnEventWithItsError) {
  const std::string base = testing::TempDir() + "hoop-timeline-failed-" + std::to_string(getpid());
  ASSERT_EQ(hoopTimelineStart((base + ".json").c_str(), 0), hoopSuccess)
      << hoopGetLastError(nullptr);
  const std::string path = base + ".0.json";
  setenv("HOOP_TIMEOUT", "1", 1);
  {
    NonBlockingPair pair;
    float value = 1;
    ASSERT_EQ(hoopAllReduce(&value, &value, 1, hoopFloat32, hoopSum, pair.comms[0], nullptr),
              hoopInProgress);
    uint64_t ticket = 0;
    ASSERT_EQ(hoopCommQueueTicket(pair.comms[0], &ticket), hoopSuccess);
    // Rank 1 never joins: the call times out, and the trace shows it with why.
    EXPECT_EQ(hoopCommWaitTicket(pair.comms[0], ticket, 10000), hoopTimeout);
  }
  unsetenv("HOOP_TIMEOUT");
  EXPECT_EQ(hoopTimelineStop(), hoopSuccess);
  const std::string text = readFile(path);
  EXPECT_EQ(text.substr(text.size() - 4), "\n]}\n");
  const size_t event = text.find("\"name\":\"allreduce\"");
  ASSERT_NE(event, std::string::npos) << text;
  const size_t error = text.find("\"error\":\"", event);
  ASSERT_NE(error, std::string::npos) << text;
  EXPECT_NE(text.find("timed out", error), std::string::npos) << text;
  unlink(path.c_str());
}

}  // namespace
