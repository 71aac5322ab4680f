package org.futoin.async;

/**
 * Versions: this binding's and the runtime's. The project has one version
 * (its top {@code meson.build}); the jar's manifest
 * ({@code Implementation-Version}), its POM and {@link #binding()} carry it.
 *
 * <pre>{@code
 * System.out.println(Version.binding() + " on libfutoin_async " + Version.runtime());
 * }</pre>
 */
public final class Version {
    private Version() {
    }

    /**
     * @return the version of this binding (of the jar), e.g. {@code "0.3.0"}
     */
    public static String binding() {
        return BuildInfo.VERSION;
    }

    /**
     * @return the version of the libfutoin_async runtime in use
     *         ({@code futoin_async_version()}); loads the native libraries
     */
    public static String runtime() {
        return FutoInNative.futoin_async_version();
    }
}
