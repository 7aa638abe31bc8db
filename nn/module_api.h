/* The C interface between the `ultima` program (nn/network.cpp) and the
 * network module libultima_nn.so (nn/torch/), which alone links LibTorch.
 * Plain C types only: the module may be built against another LibTorch (a
 * CUDA build from pip, perhaps with the old libstdc++ string ABI), so no
 * std::string or other C++ type crosses this line. Functions that can fail
 * return 0 on success, or nonzero after writing a message into `error`.
 * Bump ULTIMA_NN_API_VERSION on any change here. */
#ifndef ULTIMA_NN_MODULE_API_H
#define ULTIMA_NN_MODULE_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ULTIMA_NN_API_VERSION 3
#define ULTIMA_NN_API_SYMBOL "ultima_nn_api"

/* nn/model_file.h's NetArchitecture, field by field. */
typedef struct UltimaNnArchitecture {
  int32_t input_planes, policy_planes, blocks, channels, se_channels;
  int32_t value_channels, value_hidden, moves_left_channels, moves_left_hidden;
} UltimaNnArchitecture;

typedef struct UltimaNnOptions {
  const char* device;     /* "cpu", "cuda", "cuda:1" */
  const char* precision;  /* "auto" (fp16 on CUDA, fp32 on CPU), "fp32", "fp16", "bf16" */
  int32_t threads;        /* LibTorch intra-op threads (0: leave LibTorch's default) */
  int32_t interop_threads;/* inter-op threads, settable once per process (0: leave) */
  uint64_t seed;          /* weights' seed when no payload is given */
} UltimaNnOptions;

typedef struct UltimaNnNet UltimaNnNet; /* a network on a device, opaque */

/* nn/trainer.h's TrainerOptions. */
typedef struct UltimaNnTrainerOptions {
  const char* optimizer;    /* "sgd" (Nesterov momentum) or "adamw" */
  float momentum;           /* SGD momentum; AdamW's beta1 */
  float weight_decay;       /* SGD: L2 in the gradient; AdamW: decoupled */
  float value_weight;       /* loss = policy + value_weight * value + moves_left_weight * moves_left */
  float moves_left_weight;
  const char* device;       /* "cpu", "cuda", "cuda:1" */
  int32_t threads;          /* as in UltimaNnOptions */
  int32_t interop_threads;
  /* "fp32"; "bf16" (autocast); "fp16" (autocast with dynamic loss scaling,
   * CUDA only). Weights, optimizer state and losses stay fp32. */
  const char* precision;
} UltimaNnTrainerOptions;

/* A training batch. planes: size x input_planes x 64. The policy target is
 * sparse: row i's entries are policy_slots[j] and policy_weights[j] for j
 * in [policy_offsets[i], policy_offsets[i+1]) (policy_offsets[0] need not
 * be 0, so a slice of a batch is a batch), each a slot (0 .. policy_planes
 * x 64 - 1) and its probability (a slot given twice counts the sum). wdl: size x 3; moves_left: size plies
 * (negative: the row is left out of that loss). */
typedef struct UltimaNnTrainBatch {
  int32_t size;
  const float* planes;
  const int32_t* policy_offsets; /* size + 1 */
  const int32_t* policy_slots;
  const float* policy_weights;
  const float* wdl;
  const float* moves_left;
} UltimaNnTrainBatch;

typedef struct UltimaNnTrainer UltimaNnTrainer; /* a net, its optimizer and its device, opaque */

/* A process group for data-parallel training (c10d): ranks 0 .. world_size-1
 * meet at a rendezvous, rank 0's TCP store at master_addr:master_port, or a
 * file store at store_path when that is set. Collectives go over Gloo, or
 * NCCL for a CUDA device where the module was built with it. */
typedef struct UltimaNnGroupOptions {
  int32_t rank;
  int32_t world_size;
  const char* master_addr;
  int32_t master_port;
  const char* store_path;   /* NULL: the TCP store */
  const char* device;       /* the trainer's device: "cpu", "cuda:1" */
  int32_t timeout_seconds;  /* for the rendezvous and every collective */
} UltimaNnGroupOptions;

typedef struct UltimaNnGroup UltimaNnGroup; /* opaque */

typedef struct UltimaNnApi {
  uint32_t api_version; /* ULTIMA_NN_API_VERSION of the module */
  uint32_t api_size;    /* sizeof(UltimaNnApi) of the module */
  /* "LibTorch 1.13.1, CUDA available: no" and the like. */
  const char* (*library_version)(void);
  /* A network: from a model file's payload (raw tensors), or with random
   * weights from options->seed when payload is NULL. */
  UltimaNnNet* (*create)(const UltimaNnArchitecture* architecture, const void* payload, uint64_t payload_bytes,
                         const UltimaNnOptions* options, char* error, size_t error_size);
  void (*destroy)(UltimaNnNet* net);
  /* One forward pass. planes: batch x input_planes x 64 floats. For position
   * i, its legal moves' policy slots are move_slots[move_offsets[i] ..
   * move_offsets[i+1]); policy_logits receives their logits in that order
   * (move_offsets[batch] floats). wdl_logits: batch x 3 (win, draw, loss for
   * the side to move); moves_left: batch floats (-1 without that head).
   * Thread-safe: several threads may run passes on one net. */
  int (*forward)(UltimaNnNet* net, int32_t batch, const float* planes, const int32_t* move_offsets,
                 const int32_t* move_slots, float* policy_logits, float* wdl_logits, float* moves_left,
                 char* error, size_t error_size);
  /* The weights as a model file payload (fp32 raw tensors, whatever the
   * net's device and precision); release with free_buffer. */
  int (*serialize)(UltimaNnNet* net, char** payload, uint64_t* payload_bytes, char* error, size_t error_size);
  void (*free_buffer)(char* buffer);
  /* "cpu fp32, 1 thread" and the like; returns the length written. */
  size_t (*describe)(const UltimaNnNet* net, char* out, size_t out_size);

  /* Training (nn/torch/trainer.cpp). A trainer from a model file's payload,
   * or random weights from seed when payload is NULL. */
  UltimaNnTrainer* (*trainer_create)(const UltimaNnArchitecture* architecture, const void* payload,
                                     uint64_t payload_bytes, uint64_t seed, const UltimaNnTrainerOptions* options,
                                     char* error, size_t error_size);
  void (*trainer_destroy)(UltimaNnTrainer* trainer);
  /* Queues one optimizer step at learning rate lr (train mode) without
   * waiting for it: its losses are added up on the device. A step whose
   * loss is not finite (or, with fp16, whose gradients overflow) changes
   * nothing and is counted instead. */
  int (*trainer_step)(UltimaNnTrainer* trainer, const UltimaNnTrainBatch* batch, float lr, char* error,
                      size_t error_size);
  /* The losses since the last call, waiting for the steps queued: means[4]
   * receives policy, value, moves-left and total, per sample, averaged over
   * the steps that counted; counts[3] the steps queued, those whose loss was
   * not finite, and those skipped for an fp16 overflow. Then starts over. */
  int (*trainer_losses)(UltimaNnTrainer* trainer, double* means, int64_t* counts, char* error, size_t error_size);
  /* The losses of a batch without a step (eval mode, no gradients). */
  int (*trainer_measure)(UltimaNnTrainer* trainer, const UltimaNnTrainBatch* batch, double* losses, char* error,
                         size_t error_size);
  /* Weights, buffers and optimizer state as an opaque blob (LibTorch's
   * archive), valid for a trainer of the same architecture and options;
   * release with free_buffer. */
  int (*trainer_state)(UltimaNnTrainer* trainer, char** buffer, uint64_t* bytes, char* error, size_t error_size);
  /* Replaces the trainer's state with one from trainer_state; on failure the
   * trainer is unchanged. */
  int (*trainer_restore)(UltimaNnTrainer* trainer, const char* buffer, uint64_t bytes, char* error,
                         size_t error_size);
  /* The weights (with batch norm's running statistics) as a model file
   * payload, as serialize(); release with free_buffer. */
  int (*trainer_payload)(UltimaNnTrainer* trainer, char** payload, uint64_t* payload_bytes, char* error,
                         size_t error_size);

  /* Data-parallel training (nn/torch/distributed.cpp). Every call below,
   * and every trainer call of a joined trainer except trainer_measure and
   * trainer_losses, is a
   * collective: each rank makes it, in the same order. */
  UltimaNnGroup* (*group_create)(const UltimaNnGroupOptions* options, char* error, size_t error_size);
  void (*group_destroy)(UltimaNnGroup* group);
  /* Rank root's bytes to every rank. On root, *buffer and *bytes are its
   * data and stay its own; elsewhere they receive a copy (free_buffer). */
  int (*group_broadcast)(UltimaNnGroup* group, int32_t root, char** buffer, uint64_t* bytes, char* error,
                         size_t error_size);
  /* values[i] becomes the sum over ranks of values[i]. */
  int (*group_sum)(UltimaNnGroup* group, double* values, int32_t count, char* error, size_t error_size);
  /* Joins a trainer to a group: rank 0's weights and batch norm statistics
   * go to every rank, and from then on a step takes each rank's rows as its
   * share of one batch: batch norm uses the statistics of the whole batch,
   * gradients are averaged over ranks (all-reduced in buckets after the
   * backward pass), and the losses written are the whole batch's. A
   * restore is followed by rank 0's weights to every rank again. The group
   * must outlive the trainer. */
  int (*trainer_join)(UltimaNnTrainer* trainer, UltimaNnGroup* group, char* error, size_t error_size);
} UltimaNnApi;

typedef const UltimaNnApi* (*UltimaNnApiFunction)(void);

#ifdef __cplusplus
}
#endif

#endif /* ULTIMA_NN_MODULE_API_H */
