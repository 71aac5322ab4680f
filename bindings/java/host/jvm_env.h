/*
 * Where the host plug-in (host_plugin.c) gets the JVM it starts and the
 * class path it starts it with, from the settings a Java user already has
 * (jvm_env.c): JAVA_HOME or the `java` on PATH, and CLASSPATH. Nothing of
 * ours is needed; FUTOIN_JAVA_LIBJVM, FUTOIN_JAVA_JAR and
 * FUTOIN_JAVA_CLASSPATH remain as overrides for development.
 */
#ifndef FJ_JVM_ENV_H
#define FJ_JVM_ENV_H

#include <stddef.h>

/* The plug-in's entry in the binding's jar (a stored entry, zip_entry.h). */
#ifndef FJ_PLATFORM
#define FJ_PLATFORM "linux-x86_64"
#endif
#define FJ_PLUGIN_ENTRY "native/" FJ_PLATFORM "/futoin-hosts/libfutoin_host_java.so"

/*
 * dlopen() (RTLD_NOW | RTLD_GLOBAL) the first libjvm.so of:
 * $FUTOIN_JAVA_LIBJVM (the file); $JAVA_HOME/lib/server/libjvm.so (an
 * absolute JAVA_HOME); for each absolute PATH folder holding an executable
 * `java`: the folder its real path (symbolic links resolved, readlink -f)
 * is the bin/ of, /lib/server/libjvm.so. Returns the handle, or NULL with
 * `err` saying what was tried and what to do.
 */
void* fj_open_libjvm(char* err, size_t errlen);

/*
 * The JVM option "-Djava.class.path=..." (malloc'ed; NULL: out of memory):
 * first the binding's jar (FUTOIN_JAVA_JAR when absolute; else the jar on CLASSPATH whose
 * stored plug-in entry is this very plug-in, by CRC-32 and size; else
 * futoin-async.jar next to this plug-in, when it is there), then the
 * absolute entries of FUTOIN_JAVA_CLASSPATH, then those of CLASSPATH
 * (an entry ending in "/" "*" stands for the jars in its folder, as for
 * the java launcher); relative and empty entries are left out (they would
 * name the host program's current folder). `note` says which jar was taken and what was
 * left out, for error messages. With no entry left the option ends in "=":
 * no JVM may be started with it, as the JVM takes an empty class path for
 * the current folder too.
 */
char* fj_class_path_option(char* note, size_t notelen);

#endif
