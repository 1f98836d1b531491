/*
 * model.c — loading a model from a file (memory-mapped, weights read in
 * place) or from memory, and the read-only queries on a loaded model.
 *
 * A model is immutable once wick_model_load_* returns, so any number of
 * interpreters on any number of threads may share it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "format/schema.h"

wick_model_options wick_model_options_default(void) {
  wick_model_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  return o;
}

/* The size of wick_model_options in its first version (0.1): struct_size
 * through memory_limit_bytes. */
#define MODEL_OPTIONS_FIRST_SIZE (offsetof(wick_model_options, memory_limit_bytes) + sizeof(size_t))

static void set_error(wick_error_info *error, const char *fmt, ...) WICK_PRINTF(2, 3);
static void set_error(wick_error_info *error, const char *fmt, ...) {
  if (error == NULL) return;
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(error->message, sizeof error->message, fmt, ap);
  va_end(ap);
}

/* The caller's options (NULL: the defaults) read by their struct_size into `o`. */
static wick_status read_model_options(const wick_model_options *options, wick_model_options *o,
                                      wick_error_info *error) {
  *o = wick_model_options_default();
  if (options == NULL) return WICK_OK;
  char message[256];
  wick_status st = wick_read_options(options, MODEL_OPTIONS_FIRST_SIZE, sizeof *o, o,
                                     "wick_model_options", message, sizeof message);
  if (st != WICK_OK) set_error(error, "%s", message);
  return st;
}

static wick_model *model_new(const wick_model_options *options) {
  wick_model_options o = *options;
  wick_mem mem;
  wick_mem_init(&mem, &o.allocator, o.memory_limit_bytes);
  wick_model *m = wick_mem_calloc(&mem, 1, sizeof *m);
  if (m == NULL) return NULL;
  m->mem = mem;
  m->bump.mem = &m->mem;
  m->log = o.log;
  m->log_user = o.log_user;
  m->description = "";
  return m;
}

/* The decoded tables of a model may take at most this much memory. A crafted
 * file can point a million vector entries at one shared operator table (4
 * bytes each) and make a naive reader allocate gigabytes; real models need
 * well under one times their size plus one 64 KiB chunk. */
#define LOAD_BUDGET_FIXED ((size_t)16 << 20)
#define LOAD_BUDGET_PER_FILE_BYTE 32

/* The message for a load that ran out of its caller-set cap. */
static void cap_error(wick_error_info *error, size_t cap, const char *what) {
  set_error(error, "out of memory %s: the model's memory_limit_bytes (%zu) is reached", what, cap);
}

static wick_status finish_load(wick_model *m, wick_error_info *error, wick_model **model_out) {
  char message[512] = "";
  size_t caller_cap = m->mem.limit; /* 0: none */
  size_t budget, limit;
  if (!wick_mul_size(m->size, LOAD_BUDGET_PER_FILE_BYTE, &budget) ||
      !wick_add_size(budget, LOAD_BUDGET_FIXED, &budget) ||
      !wick_add_size(budget, m->mem.used, &limit))
    limit = 0; /* no budget representable: a file this large cannot be loaded anyway */
  bool caller_binds = caller_cap != 0 && (limit == 0 || caller_cap < limit);
  if (caller_binds) limit = caller_cap;
  m->mem.limit = limit;
  wick_status st = wick_format_read_model(m, message, sizeof message);
  m->mem.limit = caller_cap;
  if (st == WICK_ERR_OUT_OF_MEMORY && caller_binds)
    wick_format_message(message, sizeof message,
                        "out of memory reading the model: the model's memory_limit_bytes "
                        "(%zu) is reached",
                        caller_cap);
  else if (st == WICK_ERR_OUT_OF_MEMORY && limit != 0)
    wick_format_message(message, sizeof message,
                        "out of memory reading the model: its tables may take at most %zu "
                        "bytes (16 MiB + 32 x the file size)",
                        budget);
  if (st != WICK_OK) {
    set_error(error, "%s", message);
    if (m->log) m->log(m->log_user, WICK_LOG_ERROR, message);
    wick_model_destroy(m);
    return st;
  }
  if (m->log) {
    wick_format_message(message, sizeof message,
                        "loaded a %zu-byte model: %u subgraphs, %u signatures, %zu bytes of "
                        "tables",
                        m->size, m->num_subgraphs, m->num_signatures, m->mem.used);
    m->log(m->log_user, WICK_LOG_INFO, message);
  }
  if (error) error->message[0] = 0;
  *model_out = m;
  return WICK_OK;
}

wick_status wick_model_load_buffer(const void *data, size_t size, const wick_model_options *options,
                                   wick_error_info *error, wick_model **model_out) {
  if (model_out == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *model_out = NULL;
  if (data == NULL && size != 0) {
    set_error(error, "data is NULL");
    return WICK_ERR_INVALID_ARGUMENT;
  }
  wick_model_options o;
  wick_status st = read_model_options(options, &o, error);
  if (st != WICK_OK) return st;
  options = &o;
  wick_model *m = model_new(options);
  if (m == NULL) {
    if (options->memory_limit_bytes)
      cap_error(error, options->memory_limit_bytes, "creating the model");
    else
      set_error(error, "out of memory");
    return WICK_ERR_OUT_OF_MEMORY;
  }
  if (options->copy_buffer) {
    m->owned_copy = wick_mem_alloc(&m->mem, size ? size : 1);
    if (m->owned_copy == NULL) {
      wick_model_destroy(m);
      if (options->memory_limit_bytes)
        cap_error(error, options->memory_limit_bytes, "copying the model");
      else
        set_error(error, "out of memory copying a %zu-byte model", size);
      return WICK_ERR_OUT_OF_MEMORY;
    }
    if (size) memcpy(m->owned_copy, data, size);
    m->bytes = m->owned_copy;
  } else {
    m->bytes = data;
  }
  m->size = size;
  return finish_load(m, error, model_out);
}

wick_status wick_model_load_file(const char *path, const wick_model_options *options,
                                 wick_error_info *error, wick_model **model_out) {
  if (model_out == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *model_out = NULL;
  if (path == NULL) {
    set_error(error, "path is NULL");
    return WICK_ERR_INVALID_ARGUMENT;
  }
  wick_model_options o;
  wick_status rst = read_model_options(options, &o, error);
  if (rst != WICK_OK) return rst;
  options = &o;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    set_error(error, "cannot open %s: %s", path, strerror(errno));
    return WICK_ERR_IO;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    set_error(error, "%s is not a regular file", path);
    return WICK_ERR_IO;
  }
  if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
    close(fd);
    set_error(error, "%s is too large to map", path);
    return WICK_ERR_IO;
  }
  size_t size = (size_t)st.st_size;
  wick_model *m = model_new(options);
  if (m == NULL) {
    close(fd);
    if (options->memory_limit_bytes)
      cap_error(error, options->memory_limit_bytes, "creating the model");
    else
      set_error(error, "out of memory");
    return WICK_ERR_OUT_OF_MEMORY;
  }
  if (size > 0) {
    /* The mapping counts against the caller's cap like the copy of
     * copy_buffer (and the weight cache's mapping against the interpreter's):
     * a file bigger than the cap fails here, before anything is mapped. */
    if (!wick_mem_charge(&m->mem, size)) {
      size_t cap = m->mem.limit;
      close(fd);
      wick_model_destroy(m);
      cap_error(error, cap, "mapping the file");
      return WICK_ERR_OUT_OF_MEMORY;
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      close(fd);
      wick_mem_discharge(&m->mem, size);
      wick_model_destroy(m);
      set_error(error, "cannot map %s: %s", path, strerror(errno));
      return WICK_ERR_IO;
    }
    m->mapping = map;
    m->mapping_size = size;
    m->bytes = map;
  }
  close(fd);
  m->size = size;
  return finish_load(m, error, model_out);
}

void wick_model_destroy(wick_model *model) {
  if (model == NULL) return;
  wick_bump_release(&model->bump);
  if (model->mapping) {
    munmap(model->mapping, model->mapping_size);
    wick_mem_discharge(&model->mem, model->mapping_size);
  }
  wick_mem_free(&model->mem, model->owned_copy);
  wick_mem mem = model->mem;
  wick_mem_free(&mem, model);
}

const char *wick_model_description(const wick_model *model) {
  return model ? model->description : "";
}

const void *wick_model_metadata(const wick_model *model, const char *name, size_t *size_out) {
  if (size_out != NULL) *size_out = 0;
  if (model == NULL || name == NULL) return NULL;
  for (uint32_t i = 0; i < model->num_metadata; i++) {
    const wick_metadata_info *e = &model->metadata[i];
    if (e->data != NULL && strcmp(e->name, name) == 0) {
      if (size_out != NULL) *size_out = e->size;
      return e->data;
    }
  }
  return NULL;
}

size_t wick_model_subgraph_count(const wick_model *model) {
  return model ? model->num_subgraphs : 0;
}

static const wick_operator_info *model_op(const wick_model *model, size_t subgraph, size_t i) {
  if (model == NULL || subgraph >= model->num_subgraphs) return NULL;
  const wick_subgraph_info *sg = &model->subgraphs[subgraph];
  return i < sg->num_operators ? &sg->operators[i] : NULL;
}

size_t wick_model_op_count(const wick_model *model, size_t subgraph) {
  if (model == NULL || subgraph >= model->num_subgraphs) return 0;
  return model->subgraphs[subgraph].num_operators;
}

const char *wick_model_op_name(const wick_model *model, size_t subgraph, size_t i) {
  const wick_operator_info *op = model_op(model, subgraph, i);
  if (op == NULL) return NULL;
  if (op->builtin == WICK_BUILTIN_CUSTOM) return op->custom_name ? op->custom_name : "CUSTOM";
  return wick_builtin_name(op->builtin);
}

int wick_model_op_version(const wick_model *model, size_t subgraph, size_t i) {
  const wick_operator_info *op = model_op(model, subgraph, i);
  return op ? op->version : 0;
}

int wick_model_op_supported(const wick_model *model, size_t subgraph, size_t i, char *why,
                            size_t why_size) {
  char local[200];
  const wick_operator_info *op = model_op(model, subgraph, i);
  if (op == NULL) {
    if (why && why_size)
      wick_format_message(why, why_size, "no operator %zu in subgraph %zu", i, subgraph);
    return 0;
  }
  if (wick_op_lookup(op, local, sizeof local) != NULL) {
    if (why && why_size) why[0] = 0;
    return 1;
  }
  if (why && why_size) wick_format_message(why, why_size, "%s", local);
  return 0;
}

size_t wick_model_signature_count(const wick_model *model) {
  return model ? model->num_signatures : 0;
}

const char *wick_model_signature_key(const wick_model *model, size_t i) {
  if (model == NULL || i >= model->num_signatures) return NULL;
  return model->signatures[i].key;
}
