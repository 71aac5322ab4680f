/*
 * The JNI floor under a Java step, measured in the same JVM as Bench:
 * an up-call C -> static Java method (2 and 5 arguments, as the step
 * trampolines make), with the ExceptionCheck every up-call needs, and a
 * NewGlobalRef/DeleteGlobalRef pair (one per callback handed to C).
 */
#include <jni.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

JNIEXPORT jdouble JNICALL Java_JniFloor_measure(JNIEnv* env, jclass c, jint n,
                                                jint mode, jobject o)
{
    jmethodID m2 = (*env)->GetStaticMethodID(env, c, "cb2", "(Ljava/lang/Object;J)V");
    jmethodID m5 = (*env)->GetStaticMethodID(env, c, "cb5",
                                             "(Ljava/lang/Object;JIJLjava/lang/Object;)V");
    double t = now_ns();
    for (jint i = 0; i < n; ++i) {
        if (mode == 0) {
            (*env)->CallStaticVoidMethod(env, c, m2, o, (jlong)i);
            (*env)->ExceptionCheck(env);
        } else if (mode == 1) {
            (*env)->CallStaticVoidMethod(env, c, m5, o, (jlong)i, 9, (jlong)i, NULL);
            (*env)->ExceptionCheck(env);
        } else {
            jobject g = (*env)->NewGlobalRef(env, o);
            (*env)->DeleteGlobalRef(env, g);
        }
    }
    return (now_ns() - t) / n;
}
