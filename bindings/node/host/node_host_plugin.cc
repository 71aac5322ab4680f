// libfutoin_host_javascript.so: the language host "javascript" for host
// programs written in another language (futoin/sys/host.h), by embedding
// Node (libnode's embedder API) on the loop of the tool that starts it.
//
// start(): the first start makes Node's platform, an isolate and an
// environment on futoin_tool_uv_loop(tool) (the host program's loop, which
// then runs Node's handles too; the isolate stays entered on that thread),
// and runs a bootstrap that loads the futoin-async package (its JavaScript
// layer and its addon, FUTOIN_ASYNC_NODE_ADDON set to the addon this
// plug-in belongs to). resolve() forwards to the addon's own host table
// (futoin_node_host_api(), glue/fn_host.c): require(module)[function] in
// that environment. One environment per process, on the first loop: a start
// from another loop is refused.
//
// A PROTOTYPE (bindings/node/README.md, "JavaScript steps in other hosts"):
// built only with -Dnode_embed=DIR (libnode-dev's headers and libnode.so).
#include <node.h>
#include <uv.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <futoin/async.h>
#include <futoin/sys/host.h>
}

namespace {

pthread_mutex_t g_mx = PTHREAD_MUTEX_INITIALIZER;
const futoin_host_api* g_addon = nullptr; // the addon's host table
void* g_loop = nullptr;
int g_starts = 0;
std::unique_ptr<node::MultiIsolatePlatform> g_platform;
std::unique_ptr<node::InitializationResult> g_init;
std::unique_ptr<node::ArrayBufferAllocator> g_alloc;
v8::Isolate* g_isolate = nullptr;
v8::Locker* g_locker = nullptr;
node::IsolateData* g_idata = nullptr;
node::Environment* g_env = nullptr;
v8::Global<v8::Context> g_context;

// The folder of this plug-in: the package's native/futoin-hosts/ (the
// addon one folder up, the JavaScript layer at ../../lib), or a build's
// bindings/node/host/ (the addon one folder up, the layer in the checkout).
std::string own_dir()
{
    Dl_info info;
    if (!dladdr(reinterpret_cast<void*>(&own_dir), &info) || !info.dli_fname) {
        return "";
    }
    std::string p = info.dli_fname;
    return p.substr(0, p.rfind('/'));
}

int start_node(void* loop, char* err, size_t errlen)
{
    std::string dir = own_dir();
    const char* addon_env = getenv("FUTOIN_NODE_HOST_ADDON");
    const char* lib_env = getenv("FUTOIN_NODE_HOST_LIB");
    // the addon: beside the plug-in (a meson build's bindings/node/) or one
    // folder up (a package's native/futoin-hosts/)
    std::string addon = addon_env ? addon_env : dir + "/futoin_async.node";
    if (!addon_env && access(addon.c_str(), R_OK) != 0) {
        addon = dir + "/../futoin_async.node";
    }
    std::string lib = lib_env ? lib_env : dir + "/../../lib/index.js";
    // N-API addons resolve napi_* from the global scope: the node binary's
    // in a node process, libnode's here (loaded with this plug-in, locally)
    Dl_info li;
    if (!dladdr(reinterpret_cast<void*>(&node::FreeEnvironment), &li)
        || !li.dli_fname || !dlopen(li.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD)) {
        snprintf(err, errlen, "javascript: cannot make libnode's symbols global: %s", dlerror());
        return FUTOIN_EINVAL;
    }
    std::vector<std::string> args = {"futoin-host-javascript"};
    g_init = node::InitializeOncePerProcess(
            args, {node::ProcessInitializationFlags::kNoInitializeV8,
                   node::ProcessInitializationFlags::kNoInitializeNodeV8Platform,
                   node::ProcessInitializationFlags::kNoDefaultSignalHandling,
                   node::ProcessInitializationFlags::kNoStdioInitialization,
                   node::ProcessInitializationFlags::kNoPrintHelpOrVersionOutput});
    if (g_init->early_return() != 0) {
        snprintf(err, errlen, "javascript: Node did not start: %s",
                 g_init->errors().empty() ? "?" : g_init->errors()[0].c_str());
        return FUTOIN_EINVAL;
    }
    g_platform = node::MultiIsolatePlatform::Create(2);
    v8::V8::InitializePlatform(g_platform.get());
    v8::V8::Initialize();
    uv_loop_t* uv = static_cast<uv_loop_t*>(loop);
    g_alloc = node::ArrayBufferAllocator::Create();
    g_isolate = node::NewIsolate(g_alloc.get(), uv, g_platform.get());
    g_isolate->Enter(); // entered on the loop thread for the process
    g_locker = new v8::Locker(g_isolate);
    v8::HandleScope hs(g_isolate);
    g_idata = node::CreateIsolateData(g_isolate, uv, g_platform.get(), g_alloc.get());
    v8::Local<v8::Context> context = node::NewContext(g_isolate);
    g_context.Reset(g_isolate, context);
    context->Enter(); // stays entered, as the isolate
    g_env = node::CreateEnvironment(g_idata, context, g_init->args(), g_init->exec_args());
    std::string boot =
            "process.env.FUTOIN_ASYNC_NODE_ADDON = " + std::string("'") + addon + "';"
            "const r = require('module').createRequire(" + "'" + lib + "');"
            "globalThis.require = r;"
            "r('" + lib + "');";
    v8::TryCatch tc(g_isolate);
    if (node::LoadEnvironment(g_env, boot.c_str()).IsEmpty()) {
        v8::String::Utf8Value msg(g_isolate, tc.Exception());
        snprintf(err, errlen, "javascript: loading futoin-async (%s) failed: %s", lib.c_str(),
                 *msg ? *msg : "?");
        return FUTOIN_EINVAL;
    }
    void* h = dlopen(addon.c_str(), RTLD_NOW | RTLD_NOLOAD);
    auto get = h ? reinterpret_cast<const futoin_host_api* (*)()>(dlsym(h, "futoin_node_host_api"))
                 : nullptr;
    g_addon = get ? get() : nullptr;
    if (!g_addon) {
        snprintf(err, errlen, "javascript: the addon %s has no host table", addon.c_str());
        return FUTOIN_EINVAL;
    }
    g_loop = loop;
    return FUTOIN_OK;
}

int plugin_start(futoin_tool* tool, char* err, size_t errlen)
{
    void* loop = futoin_tool_uv_loop(tool);
    int rc = FUTOIN_OK;
    pthread_mutex_lock(&g_mx);
    if (!g_addon) {
        rc = start_node(loop, err, errlen);
    } else if (loop != g_loop) {
        snprintf(err, errlen, "javascript: Node runs on one loop per process, started on "
                              "another tool's");
        rc = FUTOIN_EINVAL;
    }
    if (rc == FUTOIN_OK) {
        ++g_starts;
    }
    pthread_mutex_unlock(&g_mx);
    return rc == FUTOIN_OK ? g_addon->start(tool, err, errlen) : rc;
}

int plugin_resolve(const char* module, const char* function, futoin_host_step* out,
                   char* err, size_t errlen)
{
    if (!g_addon) {
        snprintf(err, errlen, "javascript: cannot resolve %s.%s: Node is not started", module,
                 function);
        return FUTOIN_EINVAL;
    }
    v8::HandleScope hs(g_isolate);
    return g_addon->resolve(module, function, out, err, errlen);
}

void plugin_stop(void)
{
    // Node, once started, stays for the process (as a JVM does): its
    // environment holds the steps' functions the runtime may still release
    pthread_mutex_lock(&g_mx);
    --g_starts;
    pthread_mutex_unlock(&g_mx);
}

const futoin_host_api plugin = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "javascript",
        plugin_start, plugin_resolve, plugin_stop,
};

} // namespace

extern "C" __attribute__((visibility("default"))) int futoin_host_get(uint32_t version,
                                                                     const futoin_host_api** out)
{
    if (!out || version < FUTOIN_HOST_VERSION_1) {
        return FUTOIN_EVERSION;
    }
    *out = &plugin;
    return FUTOIN_OK;
}
