#include "engine/play/network_hook.h"

#include <mutex>
#include <stdexcept>

namespace ultima {
namespace {
std::mutex hook_mutex;
NetworkEvaluatorFactory& hook() {
  static NetworkEvaluatorFactory factory;
  return factory;
}
}  // namespace

void set_network_evaluator_factory(NetworkEvaluatorFactory factory) {
  std::lock_guard<std::mutex> lock(hook_mutex);
  hook() = std::move(factory);
}

std::shared_ptr<Evaluator> make_network_evaluator(const std::string& spec) {
  NetworkEvaluatorFactory factory;
  {
    std::lock_guard<std::mutex> lock(hook_mutex);
    factory = hook();
  }
  if (!factory) throw std::runtime_error("this program has no neural-network support (network spec '" + spec + "')");
  return factory(spec);
}

}  // namespace ultima
