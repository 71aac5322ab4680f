/**
 * FutoIn FTN12 AsyncSteps for Java over libfutoin_async: flows of steps
 * on an event loop ({@link org.futoin.async.AsyncSteps},
 * {@link org.futoin.async.Tool}), with steps of C, Python and Lua in the
 * same flow ({@link org.futoin.async.Polyglot}).
 *
 * <p>The module loads its native libraries with {@code System.load()}; on
 * JDKs that warn about that (JDK 22 and later, JEP 472) grant it with
 * {@code --enable-native-access=org.futoin.async} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path).
 */
module org.futoin.async {
    exports org.futoin.async;
}
