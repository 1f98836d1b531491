/*
 * nnapi_library.c — opens Android's NNAPI runtime at run time: dlopen of
 * libneuralnetworks.so (or the path of the options / $WICK_NNAPI_LIBRARY),
 * dlsym of every function nnapi_types.h lists, and the feature level.
 *
 * wick links nothing of NNAPI: a device without it (Android before 8.1, a
 * desktop) gets a delegate that declines every operator with the reason, and
 * the model runs on the CPU.
 *
 * The feature level: ANeuralNetworks_getRuntimeFeatureLevel where the runtime
 * has it (31+); before that the level is implied by which functions exist
 * (a runtime exports exactly the functions of its level): an Android 11
 * function (ANeuralNetworksMemoryDesc_create) means 30, the device functions
 * 29, relaxComputationFloat32toFloat16 28, else 27. The options may cap it
 * (to test what an older device would take, or to stay away from newer
 * drivers); the level never rises above the runtime's.
 *
 * Planning (plan_level): no library is opened at all; the "runtime" is one of
 * the planned level with one device, for decisions only.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/nnapi/nnapi_internal.h"

const char *wick_nnapi_level_name(int64_t level) {
  switch (level) {
    case 27: return "27 (Android 8.1)";
    case 28: return "28 (Android 9)";
    case 29: return "29 (Android 10)";
    case 30: return "30 (Android 11)";
    case 31: return "31 (Android 12)";
    case NNAPI_LEVEL_6: return "1000006 (feature level 6)";
    case NNAPI_LEVEL_7: return "1000007 (feature level 7)";
    case NNAPI_LEVEL_8: return "1000008 (feature level 8)";
    default: return level > NNAPI_LEVEL_8 ? "a level after 1000008" : "an unknown level";
  }
}

static void *symbol(void *handle, const char *name) { return dlsym(handle, name); }

/* Looks every function up; the level-27 ones wick calls must all be there. */
static bool resolve(nnapi_library *lib) {
#define WICK_NNAPI_RESOLVE(name, ret, params, level)                                       \
  {                                                                                        \
    void *p = symbol(lib->handle, #name);                                                  \
    memcpy(&lib->fn.name, &p, sizeof p);                                                   \
    if (p == NULL && (level) == 27 && strncmp(#name, "ANeuralNetworksMemory_", 22) != 0) { \
      snprintf(lib->unavailable, sizeof lib->unavailable,                                  \
               "the NNAPI library lacks %s (an Android 8.1 function)", #name);             \
      return false;                                                                        \
    }                                                                                      \
  }
  WICK_NNAPI_FUNCTIONS(WICK_NNAPI_RESOLVE)
#undef WICK_NNAPI_RESOLVE
  return true;
}

static int64_t runtime_level(const nnapi_library *lib) {
  if (lib->fn.ANeuralNetworks_getRuntimeFeatureLevel != NULL)
    return lib->fn.ANeuralNetworks_getRuntimeFeatureLevel();
  if (symbol(lib->handle, "ANeuralNetworksMemoryDesc_create") != NULL) return 30;
  if (lib->fn.ANeuralNetworks_getDeviceCount != NULL) return 29;
  if (lib->fn.ANeuralNetworksModel_relaxComputationFloat32toFloat16 != NULL) return 28;
  return 27;
}

static void find_device(nnapi_library *lib, const char *name) {
  if (lib->level < 29 || lib->fn.ANeuralNetworks_getDeviceCount == NULL ||
      lib->fn.ANeuralNetworks_getDevice == NULL || lib->fn.ANeuralNetworksDevice_getName == NULL) {
    snprintf(lib->unavailable, sizeof lib->unavailable,
             "choosing a device (\"%s\") needs feature level 29, the runtime has %s", name,
             wick_nnapi_level_name(lib->level));
    return;
  }
  uint32_t count = 0;
  if (lib->fn.ANeuralNetworks_getDeviceCount(&count) != ANEURALNETWORKS_NO_ERROR) count = 0;
  char names[120] = "";
  size_t at = 0;
  for (uint32_t i = 0; i < count; i++) {
    ANeuralNetworksDevice *dev = NULL;
    const char *dev_name = NULL;
    if (lib->fn.ANeuralNetworks_getDevice(i, &dev) != ANEURALNETWORKS_NO_ERROR || dev == NULL ||
        lib->fn.ANeuralNetworksDevice_getName(dev, &dev_name) != ANEURALNETWORKS_NO_ERROR ||
        dev_name == NULL)
      continue;
    if (strcmp(dev_name, name) == 0) {
      lib->device = dev;
      snprintf(lib->device_name, sizeof lib->device_name, "%s", dev_name);
      return;
    }
    if (at < sizeof names) {
      int n = snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", dev_name);
      if (n > 0) at += (size_t)n;
    }
  }
  snprintf(lib->unavailable, sizeof lib->unavailable,
           "the NNAPI runtime has no device \"%s\" (it has: %s)", name, at ? names : "none");
}

void wick_nnapi_library_open(nnapi_library *lib, const char *path, int64_t cap,
                             const char *device) {
  memset(lib, 0, sizeof *lib);
  if (path == NULL || *path == 0) path = getenv("WICK_NNAPI_LIBRARY");
  if (path == NULL || *path == 0) path = "libneuralnetworks.so";
  lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == NULL) {
    const char *e = dlerror();
    snprintf(lib->unavailable, sizeof lib->unavailable, "NNAPI is not available: %s", e ? e : path);
    return;
  }
  if (!resolve(lib)) return;
  lib->runtime_level = runtime_level(lib);
  if (lib->runtime_level < 27) {
    snprintf(lib->unavailable, sizeof lib->unavailable,
             "the NNAPI runtime reports feature level %lld (27 is the first)",
             (long long)lib->runtime_level);
    return;
  }
  lib->level = cap > 0 && cap < lib->runtime_level ? cap : lib->runtime_level;
  if (device != NULL && *device) find_device(lib, device);
}

void wick_nnapi_library_plan(nnapi_library *lib, int64_t level, const char *device) {
  memset(lib, 0, sizeof *lib);
  lib->planning = true;
  lib->runtime_level = level;
  lib->level = level;
  if (device == NULL || *device == 0) return;
  if (level < 29)
    snprintf(lib->unavailable, sizeof lib->unavailable,
             "choosing a device (\"%s\") needs feature level 29, the plan is for %s", device,
             wick_nnapi_level_name(level));
  else
    snprintf(lib->device_name, sizeof lib->device_name, "%s", device);
}

void wick_nnapi_library_close(nnapi_library *lib) {
  if (lib->handle != NULL) dlclose(lib->handle);
  memset(lib, 0, sizeof *lib);
}
