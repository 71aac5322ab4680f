/*
 * The JNI entry points of the Java binding: every function SWIG turns into
 * a `native` method of org.futoin.async.FutoInNativeJNI
 * (interface/futoin_java.i %includes this file). `JNIEnv* env` is filled
 * in by SWIG and does not appear in Java. Handles are jlong; C strings
 * cross as UTF-8 byte[].
 * Thread rules: loop thread, except fj_tool_post (any thread) and the
 * calls the runtime itself allows from any thread (success/handle_error of
 * a waiting step).
 */
#ifndef FJ_API_H
#define FJ_API_H

#include <jni.h>

/* ---- AsyncSteps (jni_steps.c) ---- */
void fj_add(JNIEnv* env, jlong bsi, jobject rec, jint arity, jboolean has_eh);
jlong fj_parallel(JNIEnv* env, jlong bsi, jobject rec);
jobject fj_chain(JNIEnv* env, jlong bsi, jobject asi);
jboolean fj_add_t(JNIEnv* env, jlong bsi, jint idx, jint id, jint arity, jboolean has_eh);
jlong fj_chain_t(jlong bsi);
void fj_set_timeout(JNIEnv* env, jlong bsi, jlong ms);
void fj_set_cancel(JNIEnv* env, jlong bsi, jobject rec);
void fj_wait_external(JNIEnv* env, jlong bsi);
void fj_loop(JNIEnv* env, jlong bsi, jobject rec, jbyteArray label);
void fj_repeat(JNIEnv* env, jlong bsi, jobject rec, jlong count,
               jbyteArray label);
void fj_break(JNIEnv* env, jlong bsi, jbyteArray label, jboolean cont);
void fj_add_sync(JNIEnv* env, jlong bsi, jlong sync, jobject rec, jint arity,
                 jboolean has_eh);
void fj_execute(JNIEnv* env, jlong bsi, jobject rec);
void fj_cancel(JNIEnv* env, jlong bsi);
jlong fj_root_new(JNIEnv* env, jlong tool);
jlong fj_new_instance(JNIEnv* env, jlong bsi);
void fj_free(JNIEnv* env, jlong bsi);
jlong fj_root_id(jlong bsi);
jboolean fj_is_valid(jlong bsi);
jboolean fj_is_same_thread(jlong bsi);
jboolean fj_is_ours(jlong bsi);

/* ---- Rec tables (jni_tool.c over jni_rectab.c) ---- */
/* Binds the Rec table of Tool `tool` (an Object[] and a direct buffer of
 * `cap` ids, see jni_rectab.c); returns its index, 0: none (use global
 * references). */
jint fj_rt_bind(JNIEnv* env, jlong tool, jobject recs, jobject io, jint cap);

/* ---- the state and the error state (jni_state.c) ---- */
jobject fj_state(JNIEnv* env, jlong bsi);
jbyteArray fj_error_info(JNIEnv* env, jlong bsi);
jbyteArray fj_error_code(JNIEnv* env, jlong bsi);
jobject fj_last_exception(JNIEnv* env, jlong bsi);

/* ---- ForeignValue holders (jni_values.c) ---- */
jint fj_foreign_flags(jlong holder);
jlong fj_foreign_address(jlong holder);
void fj_foreign_free(jlong holder);

/* ---- completing a step (jni_complete.c) ---- */
void fj_success0(JNIEnv* env, jlong bsi);
void fj_success1(JNIEnv* env, jlong bsi, jint tag, jlong bits, jobject obj);
void fj_success(JNIEnv* env, jlong bsi, jint tags, jlong b0, jlong b1,
                jlong b2, jlong b3, jobject o0, jobject o1, jobject o2,
                jobject o3);
void fj_success_step(JNIEnv* env, jlong bsi, jint tags, jlong b0, jlong b1,
                     jlong b2, jlong b3, jobject o0, jobject o1, jobject o2,
                     jobject o3);
void fj_handle_error(JNIEnv* env, jlong bsi, jbyteArray code, jbyteArray info,
                     jobject exc);
jint fj_try_success(JNIEnv* env, jlong bsi, jint tags, jlong b0, jlong b1,
                    jlong b2, jlong b3, jobject o0, jobject o1, jobject o2,
                    jobject o3);
jint fj_try_error(JNIEnv* env, jlong bsi, jbyteArray code, jbyteArray info,
                  jobject exc);

/* ---- Tool (jni_tool.c) ---- */
jlong fj_tool_new(JNIEnv* env, jobject jtool, jboolean keepalive,
                  jboolean virtual_time);
void fj_tool_release_loop(jlong tool);
jint fj_tool_free(JNIEnv* env, jlong tool);
jint fj_tool_run(JNIEnv* env, jlong tool, jlong gen);
void fj_tool_stop(jlong tool, jlong gen);
jint fj_tool_run_nowait(JNIEnv* env, jlong tool);
jint fj_tool_advance(JNIEnv* env, jlong tool, jlong ms, jlong gen);
jlong fj_tool_next_due(jlong tool);
jlong fj_tool_now(jlong tool);
jboolean fj_tool_is_virtual(jlong tool);
jboolean fj_core_is_virtual(jlong core);
/* hooks and the live dump (jni_watch.c) */
jint fj_tool_set_hooks(jlong tool, jboolean on);
jbyteArray fj_tool_dump(JNIEnv* env, jlong tool);
void fj_tool_post(jlong tool);
jlong fj_tool_schedule(JNIEnv* env, jlong tool, jlong delay_ms, jobject handle);
void fj_tool_cancel_timer(JNIEnv* env, jlong tool, jlong timer);
jboolean fj_tool_is_same_thread(jlong tool);
jlong fj_tool_misuse_count(jlong tool);
jlong fj_tool_ptr(jlong tool);
jboolean fj_tool_borrowed_here(jlong core);
jlong fj_async_tool(jlong bsi);
jlong fj_tool_borrow(JNIEnv* env, jlong core, jobject jtool);
void fj_tool_unborrow(JNIEnv* env, jlong tool);
jlong fj_core_misuse_count(jlong core);
jlong fj_global_refs(void);
jlong fj_attached_threads(void);
jlong fj_detached_threads(void);

/* ---- the load policy (jni_policy.c) ---- */
/* futoin_host_policy_set() of the futoin_tool* `tool` (0: the process);
 * each list n NUL-terminated UTF-8 entries packed in one byte[] (null: not
 * restricted). Any thread (the caller keeps the tool alive). */
jint fj_policy_set(JNIEnv* env, jlong tool, jbyteArray languages, jint nlanguages,
                   jbyteArray modules, jint nmodules);

/* ---- polyglot (host/jni_host.c) ---- */
jlong fj_origin_new(JNIEnv* env, jbyteArray function, jbyteArray file,
                    jint line);
jobject fj_lambda_target(JNIEnv* env, jobject cls);
jlong fj_host_table_address(void);
jlong fj_named_steps(void);
jint fj_host_add(JNIEnv* env, jlong bsi, jbyteArray language,
                 jbyteArray module, jbyteArray function);
jobject fj_async_stack(JNIEnv* env, jlong bsi);
jint fj_state_set(JNIEnv* env, jlong bsi, jbyteArray name, jint tag,
                  jlong bits, jobject obj);
jobject fj_state_get(JNIEnv* env, jlong bsi, jbyteArray name);

/* ---- test hooks (jni_testhooks.c) ---- */
void fj_test_add_foreign_producer(jlong bsi);
void fj_test_add_foreign_consumer(jlong bsi);
jint fj_test_foreign_cleanups(void);
jint fj_test_foreign_seen(void);
void fj_test_add_c_values(jlong bsi, jint kind);
void fj_test_add_c_pass(jlong bsi);
jint fj_test_run_on_native_thread(JNIEnv* env, jlong tool_ptr);
jlong fj_test_sync_periods(jlong sync);
jstring fj_test_c_hosted(JNIEnv* env, jstring module, jstring function, jint mode,
                         jlongArray core_out);

#endif
