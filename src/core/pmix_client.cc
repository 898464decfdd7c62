#include "core/pmix_client.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "base/env.h"
#include "base/error.h"
#include "core/pmix_abi.h"

namespace hoop {
namespace {

using pmix_abi::kGlobalScope;
using pmix_abi::kMaxKeyLength;
using pmix_abi::kNamespaceBytes;
using pmix_abi::kStringType;
using pmix_abi::kSuccess;
using PmixProc = pmix_abi::Proc;
using PmixValue = pmix_abi::Value;

struct PmixLibrary {
  int (*init)(PmixProc*, void*, size_t);
  int (*finalize)(const void*, size_t);
  int (*put)(uint8_t, const char*, PmixValue*);
  int (*commit)();
  int (*fence)(const PmixProc*, size_t, const void*, size_t);
  int (*get)(const PmixProc*, const char*, const void*, size_t, PmixValue**);
  const char* (*errorString)(int);
};

struct Loaded {
  PmixLibrary library{};
  bool ok = false;
  std::string why;
};

template <typename Function>
bool bind(void* handle, const char* name, Function& function, std::string& why) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (function == nullptr && why.empty()) why = str("libpmix has no ", name);
  return function != nullptr;
}

Loaded load() {
  Loaded loaded;
  // Global, and never unloaded: the components libpmix loads itself resolve its symbols, and a
  // program that also uses MPI shares the one copy.
  void* handle = nullptr;
  for (const char* name : {"libpmix.so.2", "libpmix.so"}) {
    handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (handle != nullptr) break;
    const char* error = dlerror();
    if (loaded.why.empty())
      loaded.why = error != nullptr ? error : str("dlopen(", name, ") failed");
  }
  if (handle == nullptr) return loaded;
  loaded.why.clear();
  PmixLibrary& l = loaded.library;
  bool ok = bind(handle, "PMIx_Init", l.init, loaded.why);
  ok &= bind(handle, "PMIx_Finalize", l.finalize, loaded.why);
  ok &= bind(handle, "PMIx_Put", l.put, loaded.why);
  ok &= bind(handle, "PMIx_Commit", l.commit, loaded.why);
  ok &= bind(handle, "PMIx_Fence", l.fence, loaded.why);
  ok &= bind(handle, "PMIx_Get", l.get, loaded.why);
  ok &= bind(handle, "PMIx_Error_string", l.errorString, loaded.why);
  loaded.ok = ok;
  return loaded;
}

const Loaded& loaded() {
  static const Loaded library = load();
  return library;
}

const PmixLibrary& library() { return loaded().library; }

std::string describeStatus(int status) {
  const char* text = library().errorString(status);
  return str(text != nullptr ? text : "unknown status", " (", status, ")");
}

void checkKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxKeyLength) {
    fail(hoopInternalError, "PMIx key '", key, "' is empty or longer than ", kMaxKeyLength);
  }
}

}  // namespace

bool pmixServerPresent() {
  return envString("PMIX_NAMESPACE").has_value() && envString("PMIX_RANK").has_value();
}

std::unique_ptr<PmixClient> PmixClient::connect(std::string& why) {
  const Loaded& pmix = loaded();
  if (!pmix.ok) {
    why = str("libpmix cannot be loaded: ", pmix.why);
    return nullptr;
  }
  PmixProc self{};
  int status = pmix.library.init(&self, nullptr, 0);
  if (status != kSuccess) {
    why = str("PMIx_Init failed: ", describeStatus(status));
    return nullptr;
  }
  std::unique_ptr<PmixClient> client(new PmixClient());
  client->namespace_.assign(self.nspace, strnlen(self.nspace, kNamespaceBytes));
  client->rank_ = static_cast<int>(self.rank);
  return client;
}

PmixClient::~PmixClient() { library().finalize(nullptr, 0); }

void PmixClient::publish(const std::string& key, const std::string& value) {
  checkKey(key);
  PmixValue item{};
  item.type = kStringType;
  std::string copy = value;  // the library copies it; its field is not const
  item.data.string = copy.data();
  int status = library().put(kGlobalScope, key.c_str(), &item);
  if (status != kSuccess) {
    fail(hoopSystemError, "PMIx_Put(", key, ") by rank ", rank_, " of job ", namespace_,
         " failed: ", describeStatus(status));
  }
  status = library().commit();
  if (status != kSuccess) {
    fail(hoopSystemError, "PMIx_Commit by rank ", rank_, " of job ", namespace_,
         " failed: ", describeStatus(status));
  }
}

void PmixClient::fence() {
  int status = library().fence(nullptr, 0, nullptr, 0);
  if (status != kSuccess) {
    fail(hoopSystemError, "PMIx_Fence by rank ", rank_, " of job ", namespace_,
         " failed: ", describeStatus(status));
  }
}

std::string PmixClient::lookup(int rank, const std::string& key) {
  checkKey(key);
  PmixProc owner{};
  std::memcpy(owner.nspace, namespace_.data(), std::min(namespace_.size(), kNamespaceBytes - 1));
  owner.rank = static_cast<uint32_t>(rank);
  PmixValue* found = nullptr;
  int status = library().get(&owner, key.c_str(), nullptr, 0, &found);
  if (status != kSuccess || found == nullptr) {
    fail(hoopSystemError, "PMIx_Get(", key, " of rank ", rank, ") by rank ", rank_, " of job ",
         namespace_, " failed: ", describeStatus(status));
  }
  // The library allocated the value and its string with malloc; hoop frees both.
  std::string text;
  bool isString = found->type == kStringType;
  if (isString && found->data.string != nullptr) text = found->data.string;
  if (isString) std::free(found->data.string);
  std::free(found);
  if (!isString) {
    fail(hoopSystemError, "PMIx_Get(", key, " of rank ", rank, "): rank ", rank,
         " published something other than a string");
  }
  return text;
}

}  // namespace hoop
