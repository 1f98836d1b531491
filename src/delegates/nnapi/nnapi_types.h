/*
 * nnapi_types.h — the constants, structs and function types of Android's
 * Neural Networks API (NNAPI) C interface that wick's NNAPI delegate and the
 * test implementation in tests/nnapi/ use, written for wick.
 *
 * Every number and layout here follows the NDK reference of the
 * NeuralNetworks header (the frozen, append-only public header of
 * libneuralnetworks.so: "do not modify enums, constants, signatures or struct
 * layouts"). Only what wick uses is declared; names keep the NDK's spelling so
 * they can be checked against the reference one by one. Feature levels: 27 is
 * Android 8.1, 28 Android 9, 29 Android 10, 30 Android 11, 31 Android 12;
 * later levels are numbered 1000006, 1000007, ... (updatable NNAPI).
 *
 * Nothing here links anything: the delegate resolves the functions with dlsym
 * at run time (nnapi_library.c); the test implementation defines them.
 */
#ifndef WICK_DELEGATES_NNAPI_NNAPI_TYPES_H
#define WICK_DELEGATES_NNAPI_NNAPI_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Feature levels (ANEURALNETWORKS_FEATURE_LEVEL_1 ... _8). */
enum {
  NNAPI_LEVEL_27 = 27, /* Android 8.1 (O MR1) */
  NNAPI_LEVEL_28 = 28, /* Android 9 (P) */
  NNAPI_LEVEL_29 = 29, /* Android 10 (Q) */
  NNAPI_LEVEL_30 = 30, /* Android 11 (R) */
  NNAPI_LEVEL_31 = 31, /* Android 12 (S) */
  NNAPI_LEVEL_6 = 1000006,
  NNAPI_LEVEL_7 = 1000007,
  NNAPI_LEVEL_8 = 1000008
};

/* OperandCode. */
enum {
  ANEURALNETWORKS_FLOAT32 = 0,
  ANEURALNETWORKS_INT32 = 1,
  ANEURALNETWORKS_UINT32 = 2,
  ANEURALNETWORKS_TENSOR_FLOAT32 = 3,
  ANEURALNETWORKS_TENSOR_INT32 = 4,
  ANEURALNETWORKS_TENSOR_QUANT8_ASYMM = 5,
  ANEURALNETWORKS_BOOL = 6,                            /* 29 */
  ANEURALNETWORKS_TENSOR_QUANT16_SYMM = 7,             /* 29 */
  ANEURALNETWORKS_TENSOR_FLOAT16 = 8,                  /* 29 */
  ANEURALNETWORKS_TENSOR_BOOL8 = 9,                    /* 29 */
  ANEURALNETWORKS_FLOAT16 = 10,                        /* 29 */
  ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL = 11, /* 29 */
  ANEURALNETWORKS_TENSOR_QUANT16_ASYMM = 12,           /* 29 */
  ANEURALNETWORKS_TENSOR_QUANT8_SYMM = 13,             /* 29 */
  ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED = 14,     /* 30 */
  ANEURALNETWORKS_MODEL = 15                           /* 30 */
};

/* OperationCode (those wick maps; the level each appeared at). */
enum {
  ANEURALNETWORKS_ADD = 0,                       /* 27 */
  ANEURALNETWORKS_AVERAGE_POOL_2D = 1,           /* 27 */
  ANEURALNETWORKS_CONCATENATION = 2,             /* 27 */
  ANEURALNETWORKS_CONV_2D = 3,                   /* 27 */
  ANEURALNETWORKS_DEPTHWISE_CONV_2D = 4,         /* 27 */
  ANEURALNETWORKS_DEPTH_TO_SPACE = 5,            /* 27 */
  ANEURALNETWORKS_DEQUANTIZE = 6,                /* 27 */
  ANEURALNETWORKS_EMBEDDING_LOOKUP = 7,          /* 27 */
  ANEURALNETWORKS_FULLY_CONNECTED = 9,           /* 27 */
  ANEURALNETWORKS_L2_NORMALIZATION = 11,         /* 27 */
  ANEURALNETWORKS_LOGISTIC = 14,                 /* 27 */
  ANEURALNETWORKS_MAX_POOL_2D = 17,              /* 27 */
  ANEURALNETWORKS_MUL = 18,                      /* 27 */
  ANEURALNETWORKS_RELU = 19,                     /* 27 */
  ANEURALNETWORKS_RELU1 = 20,                    /* 27 */
  ANEURALNETWORKS_RELU6 = 21,                    /* 27 */
  ANEURALNETWORKS_RESHAPE = 22,                  /* 27 */
  ANEURALNETWORKS_RESIZE_BILINEAR = 23,          /* 27 */
  ANEURALNETWORKS_SOFTMAX = 25,                  /* 27 */
  ANEURALNETWORKS_SPACE_TO_DEPTH = 26,           /* 27 */
  ANEURALNETWORKS_TANH = 28,                     /* 27 */
  ANEURALNETWORKS_DIV = 30,                      /* 28 */
  ANEURALNETWORKS_MEAN = 31,                     /* 28 */
  ANEURALNETWORKS_PAD = 32,                      /* 28 */
  ANEURALNETWORKS_STRIDED_SLICE = 35,            /* 28 */
  ANEURALNETWORKS_SUB = 36,                      /* 28 */
  ANEURALNETWORKS_TRANSPOSE = 37,                /* 28 */
  ANEURALNETWORKS_ABS = 38,                      /* 29 */
  ANEURALNETWORKS_EXP = 49,                      /* 29 */
  ANEURALNETWORKS_LOG = 60,                      /* 29 */
  ANEURALNETWORKS_MAXIMUM = 65,                  /* 29 */
  ANEURALNETWORKS_MINIMUM = 66,                  /* 29 */
  ANEURALNETWORKS_NEG = 67,                      /* 29 */
  ANEURALNETWORKS_PRELU = 71,                    /* 29 */
  ANEURALNETWORKS_QUANTIZE = 72,                 /* 29 */
  ANEURALNETWORKS_RSQRT = 83,                    /* 29 */
  ANEURALNETWORKS_SIN = 85,                      /* 29 */
  ANEURALNETWORKS_SLICE = 86,                    /* 29 */
  ANEURALNETWORKS_SQRT = 88,                     /* 29 */
  ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR = 94,  /* 29 */
  ANEURALNETWORKS_HARD_SWISH = 99,               /* 30 */
  ANEURALNETWORKS_CAST = 45,                     /* 29 */
  ANEURALNETWORKS_EQUAL = 48,                    /* 29 */
  ANEURALNETWORKS_GREATER = 53,                  /* 29 */
  ANEURALNETWORKS_GREATER_EQUAL = 54,            /* 29 */
  ANEURALNETWORKS_LESS = 58,                     /* 29 */
  ANEURALNETWORKS_LESS_EQUAL = 59,               /* 29 */
  ANEURALNETWORKS_LOGICAL_AND = 61,              /* 29 */
  ANEURALNETWORKS_LOGICAL_NOT = 62,              /* 29 */
  ANEURALNETWORKS_LOGICAL_OR = 63,               /* 29 */
  ANEURALNETWORKS_NOT_EQUAL = 68,                /* 29 */
  ANEURALNETWORKS_REDUCE_ALL = 75,               /* 29 */
  ANEURALNETWORKS_REDUCE_ANY = 76,               /* 29 */
  ANEURALNETWORKS_REDUCE_MAX = 77,               /* 29 */
  ANEURALNETWORKS_REDUCE_MIN = 78,               /* 29 */
  ANEURALNETWORKS_REDUCE_PROD = 79,              /* 29 */
  ANEURALNETWORKS_REDUCE_SUM = 80,               /* 29 */
  ANEURALNETWORKS_SELECT = 84,                   /* 29 */
  ANEURALNETWORKS_TILE = 89,                     /* 29 */
  ANEURALNETWORKS_DETECTION_POSTPROCESSING = 47, /* 29 */
  ANEURALNETWORKS_IF = 96,                       /* 30 */
  ANEURALNETWORKS_WHILE = 97,                    /* 30 */
  ANEURALNETWORKS_BATCH_MATMUL = 102             /* 1000006 (feature level 6) */
};

/* FuseCode: the same numbers as TFLite's first four fused activations. */
enum {
  ANEURALNETWORKS_FUSED_NONE = 0,
  ANEURALNETWORKS_FUSED_RELU = 1,
  ANEURALNETWORKS_FUSED_RELU1 = 2,
  ANEURALNETWORKS_FUSED_RELU6 = 3
};

/* PaddingCode (implicit padding; wick always passes explicit padding). */
enum { ANEURALNETWORKS_PADDING_SAME = 1, ANEURALNETWORKS_PADDING_VALID = 2 };

/* PreferenceCode. */
enum {
  ANEURALNETWORKS_PREFER_LOW_POWER = 0,
  ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER = 1,
  ANEURALNETWORKS_PREFER_SUSTAINED_SPEED = 2
};

/* ResultCode. */
enum {
  ANEURALNETWORKS_NO_ERROR = 0,
  ANEURALNETWORKS_OUT_OF_MEMORY = 1,
  ANEURALNETWORKS_INCOMPLETE = 2,
  ANEURALNETWORKS_UNEXPECTED_NULL = 3,
  ANEURALNETWORKS_BAD_DATA = 4,
  ANEURALNETWORKS_OP_FAILED = 5,
  ANEURALNETWORKS_BAD_STATE = 6,
  ANEURALNETWORKS_UNMAPPABLE = 7,
  ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE = 8,
  ANEURALNETWORKS_UNAVAILABLE_DEVICE = 9,
  ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT = 10 /* 30: e.g. a WHILE past its loop timeout */
};

/* DeviceTypeCode (29). */
enum {
  ANEURALNETWORKS_DEVICE_UNKNOWN = 0,
  ANEURALNETWORKS_DEVICE_OTHER = 1,
  ANEURALNETWORKS_DEVICE_CPU = 2,
  ANEURALNETWORKS_DEVICE_GPU = 3,
  ANEURALNETWORKS_DEVICE_ACCELERATOR = 4
};

/* Operand values of at most this many bytes are copied by setOperandValue;
 * larger ones are referenced and must stay valid while the model is used. */
#define ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES 128
/* Compilation caching token size (29). */
#define ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN 32

typedef struct ANeuralNetworksModel ANeuralNetworksModel;
typedef struct ANeuralNetworksCompilation ANeuralNetworksCompilation;
typedef struct ANeuralNetworksExecution ANeuralNetworksExecution;
typedef struct ANeuralNetworksEvent ANeuralNetworksEvent;
typedef struct ANeuralNetworksMemory ANeuralNetworksMemory;
typedef struct ANeuralNetworksDevice ANeuralNetworksDevice;
typedef int32_t ANeuralNetworksOperationType;

/* ANeuralNetworksOperandType: dimensionCount 0 for scalars. */
typedef struct ANeuralNetworksOperandType {
  int32_t type;
  uint32_t dimensionCount;
  const uint32_t *dimensions;
  float scale;
  int32_t zeroPoint;
} ANeuralNetworksOperandType;

/* ANeuralNetworksSymmPerChannelQuantParams (29). */
typedef struct ANeuralNetworksSymmPerChannelQuantParams {
  uint32_t channelDim;
  uint32_t scaleCount;
  const float *scales;
} ANeuralNetworksSymmPerChannelQuantParams;

/* The functions, as X(name, return type, parameters, level introduced). The
 * delegate resolves each with dlsym; those of a level above the runtime's are
 * never called. */
#define WICK_NNAPI_FUNCTIONS(X)                                                                   \
  X(ANeuralNetworksMemory_createFromFd, int,                                                      \
    (size_t size, int protect, int fd, size_t offset, ANeuralNetworksMemory **memory), 27)        \
  X(ANeuralNetworksMemory_free, void, (ANeuralNetworksMemory * memory), 27)                       \
  X(ANeuralNetworksModel_create, int, (ANeuralNetworksModel * *model), 27)                        \
  X(ANeuralNetworksModel_free, void, (ANeuralNetworksModel * model), 27)                          \
  X(ANeuralNetworksModel_finish, int, (ANeuralNetworksModel * model), 27)                         \
  X(ANeuralNetworksModel_addOperand, int,                                                         \
    (ANeuralNetworksModel * model, const ANeuralNetworksOperandType *type), 27)                   \
  X(ANeuralNetworksModel_setOperandValue, int,                                                    \
    (ANeuralNetworksModel * model, int32_t index, const void *buffer, size_t length), 27)         \
  X(ANeuralNetworksModel_setOperandValueFromMemory, int,                                          \
    (ANeuralNetworksModel * model, int32_t index, const ANeuralNetworksMemory *memory,            \
     size_t offset, size_t length),                                                               \
    27)                                                                                           \
  X(ANeuralNetworksModel_addOperation, int,                                                       \
    (ANeuralNetworksModel * model, ANeuralNetworksOperationType type, uint32_t inputCount,        \
     const uint32_t *inputs, uint32_t outputCount, const uint32_t *outputs),                      \
    27)                                                                                           \
  X(ANeuralNetworksModel_identifyInputsAndOutputs, int,                                           \
    (ANeuralNetworksModel * model, uint32_t inputCount, const uint32_t *inputs,                   \
     uint32_t outputCount, const uint32_t *outputs),                                              \
    27)                                                                                           \
  X(ANeuralNetworksCompilation_create, int,                                                       \
    (ANeuralNetworksModel * model, ANeuralNetworksCompilation * *compilation), 27)                \
  X(ANeuralNetworksCompilation_free, void, (ANeuralNetworksCompilation * compilation), 27)        \
  X(ANeuralNetworksCompilation_setPreference, int,                                                \
    (ANeuralNetworksCompilation * compilation, int32_t preference), 27)                           \
  X(ANeuralNetworksCompilation_finish, int, (ANeuralNetworksCompilation * compilation), 27)       \
  X(ANeuralNetworksExecution_create, int,                                                         \
    (ANeuralNetworksCompilation * compilation, ANeuralNetworksExecution * *execution), 27)        \
  X(ANeuralNetworksExecution_free, void, (ANeuralNetworksExecution * execution), 27)              \
  X(ANeuralNetworksExecution_setInput, int,                                                       \
    (ANeuralNetworksExecution * execution, int32_t index, const ANeuralNetworksOperandType *type, \
     const void *buffer, size_t length),                                                          \
    27)                                                                                           \
  X(ANeuralNetworksExecution_setOutput, int,                                                      \
    (ANeuralNetworksExecution * execution, int32_t index, const ANeuralNetworksOperandType *type, \
     void *buffer, size_t length),                                                                \
    27)                                                                                           \
  X(ANeuralNetworksExecution_startCompute, int,                                                   \
    (ANeuralNetworksExecution * execution, ANeuralNetworksEvent * *event), 27)                    \
  X(ANeuralNetworksEvent_wait, int, (ANeuralNetworksEvent * event), 27)                           \
  X(ANeuralNetworksEvent_free, void, (ANeuralNetworksEvent * event), 27)                          \
  X(ANeuralNetworksModel_relaxComputationFloat32toFloat16, int,                                   \
    (ANeuralNetworksModel * model, bool allow), 28)                                               \
  X(ANeuralNetworks_getDeviceCount, int, (uint32_t * numDevices), 29)                             \
  X(ANeuralNetworks_getDevice, int, (uint32_t devIndex, ANeuralNetworksDevice * *device), 29)     \
  X(ANeuralNetworksDevice_getName, int, (const ANeuralNetworksDevice *device, const char **name), \
    29)                                                                                           \
  X(ANeuralNetworksDevice_getType, int, (const ANeuralNetworksDevice *device, int32_t *type), 29) \
  X(ANeuralNetworksDevice_getFeatureLevel, int,                                                   \
    (const ANeuralNetworksDevice *device, int64_t *featureLevel), 29)                             \
  X(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams, int,                                \
    (ANeuralNetworksModel * model, int32_t index,                                                 \
     const ANeuralNetworksSymmPerChannelQuantParams *channelQuant),                               \
    29)                                                                                           \
  X(ANeuralNetworksCompilation_createForDevices, int,                                             \
    (ANeuralNetworksModel * model, const ANeuralNetworksDevice *const *devices,                   \
     uint32_t numDevices, ANeuralNetworksCompilation **compilation),                              \
    29)                                                                                           \
  X(ANeuralNetworksCompilation_setCaching, int,                                                   \
    (ANeuralNetworksCompilation * compilation, const char *cacheDir, const uint8_t *token), 29)   \
  X(ANeuralNetworksExecution_compute, int, (ANeuralNetworksExecution * execution), 29)            \
  X(ANeuralNetworksModel_setOperandValueFromModel, int,                                           \
    (ANeuralNetworksModel * model, int32_t index, const ANeuralNetworksModel *value), 30)         \
  X(ANeuralNetworks_getRuntimeFeatureLevel, int64_t, (void), 31)

#endif /* WICK_DELEGATES_NNAPI_NNAPI_TYPES_H */
