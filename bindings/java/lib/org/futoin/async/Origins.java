package org.futoin.async;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Where a Java step came from (language "java",
 * {@code package.Class.method}, {@code File.java:line}) for async stacks. Worked out only when the
 * runtime records a stack (the step's class of futoin/sys/host.h asks),
 * once per class of step, and kept as a native futoin_frame_origin for the
 * life of the process: add() costs nothing more.
 *
 * <p>A lambda or method reference is a hidden class whose constant pool
 * names the method it calls (read through JNI, host/jni_host.c); the line is
 * the first line of that method in the LineNumberTable of its class file.
 * Whatever cannot be found (no class file, no debug info) is left out.
 */
final class Origins {
    private Origins() {
    }

    private static final ClassValue<Long> BY_CLASS = new ClassValue<>() {
        @Override
        protected Long computeValue(Class<?> c) {
            return compute(c);
        }
    };

    /** The origin of a step function: a futoin_frame_origin*, or 0. */
    static long of(Object fn) {
        if (fn == null) {
            return 0;
        }
        if (fn instanceof Polyglot.NamedStep) {
            return ((Polyglot.NamedStep) fn).origin();
        }
        return BY_CLASS.get(fn.getClass());
    }

    private static long compute(Class<?> c) {
        if (c.isHidden() || c.isSynthetic()) {
            String[] ref = target((Object[]) FutoInNative.lambda_target(c), c);
            Class<?> host = c.getNestHost();
            if (ref != null) {
                Class<?> target = host;
                String owner = ref[0].replace('/', '.');
                if (!owner.equals(host.getName())) {
                    try {
                        target = Class.forName(owner, false, host.getClassLoader());
                    } catch (ClassNotFoundException | LinkageError e) {
                        target = null;
                    }
                }
                if (target != null) {
                    return ofMethod(target, ref[1], ref[2]);
                }
            }
            return ofMethod(host, "lambda", null);
        }
        for (String m : new String[] {"execute", "handle", "cancel"}) {
            for (java.lang.reflect.Method x : c.getDeclaredMethods()) {
                if (x.getName().equals(m) && !x.isBridge() && !x.isSynthetic()) {
                    return ofMethod(c, m, null);
                }
            }
        }
        return ofMethod(c, null, null);
    }

    /** Of the member references of lambda class `c`, the method it calls:
     *  not a field, not a constructor, not one of its own; a lambda body
     *  (lambda$...) first. */
    private static String[] target(Object[] refs, Class<?> c) {
        if (refs == null) {
            return null;
        }
        String self = c.getName();
        int slash = self.indexOf('/');
        self = (slash > 0 ? self.substring(0, slash) : self).replace('.', '/');
        String[] best = null;
        for (Object o : refs) {
            String[] r = (String[]) o;
            if (r == null || r.length < 3 || r[0] == null || r[1] == null || r[2] == null) {
                continue;
            }
            if (!r[2].startsWith("(") || r[1].equals("<init>") || r[0].equals(self)
                    || r[0].equals("java/util/Objects")) {
                continue;
            }
            if (r[1].startsWith("lambda$")) {
                return r;
            }
            if (best == null) {
                best = r;
            }
        }
        return best;
    }

    /** The origin of `method` (descriptor `desc`, or any) of `c`. */
    static long ofMethod(Class<?> c, String method, String desc) {
        String name = c.getName();
        String simple = name.substring(name.lastIndexOf('.') + 1);
        String file = null;
        int line = 0;
        byte[] bytes = classFile(c);
        if (bytes != null) {
            try {
                Object[] r = scan(bytes, method, desc);
                file = (String) r[0];
                line = (Integer) r[1];
            } catch (IOException | RuntimeException e) {
                // a class file this reader does not understand: no file:line
            }
        }
        if (file == null) {
            int dollar = simple.indexOf('$');
            file = (dollar > 0 ? simple.substring(0, dollar) : simple) + ".java";
        }
        String fn = method == null ? name : name + "." + method; /* package.Class.method */
        return FutoInNative.origin_new(Values.cstr(fn), Values.cstr(file), line);
    }

    private static byte[] classFile(Class<?> c) {
        String res = c.getName().replace('.', '/') + ".class";
        ClassLoader l = c.getClassLoader();
        try (InputStream in = l != null ? l.getResourceAsStream(res) : ClassLoader.getSystemResourceAsStream(res)) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            return null;
        }
    }

    /** {SourceFile, first line of `method`} from a class file (JVMS §4). */
    static Object[] scan(byte[] b, String method, String desc) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readInt(); // minor, major
        int n = in.readUnsignedShort();
        String[] utf = new String[n];
        for (int i = 1; i < n; ++i) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1: utf[i] = in.readUTF(); break;
                case 3: case 4: in.skipNBytes(4); break;
                case 5: case 6: in.skipNBytes(8); ++i; break;
                case 7: case 8: case 16: case 19: case 20: in.skipNBytes(2); break;
                case 9: case 10: case 11: case 12: case 17: case 18: in.skipNBytes(4); break;
                case 15: in.skipNBytes(3); break;
                default: throw new IOException("constant pool tag " + tag);
            }
        }
        in.skipNBytes(6); // access, this, super
        in.skipNBytes(2L * in.readUnsignedShort()); // interfaces
        int fields = in.readUnsignedShort();
        for (int i = 0; i < fields; ++i) {
            in.skipNBytes(6);
            skipAttributes(in);
        }
        int line = 0;
        int methods = in.readUnsignedShort();
        for (int i = 0; i < methods; ++i) {
            in.skipNBytes(2);
            String name = utf[in.readUnsignedShort()];
            String d = utf[in.readUnsignedShort()];
            boolean match = line == 0 && method != null && method.equals(name) && (desc == null || desc.equals(d));
            int attrs = in.readUnsignedShort();
            for (int a = 0; a < attrs; ++a) {
                String an = utf[in.readUnsignedShort()];
                int len = in.readInt();
                if (match && "Code".equals(an)) {
                    line = firstLine(in, utf);
                } else {
                    in.skipNBytes(len);
                }
            }
        }
        String source = null;
        int attrs = in.readUnsignedShort();
        for (int a = 0; a < attrs; ++a) {
            String an = utf[in.readUnsignedShort()];
            int len = in.readInt();
            if ("SourceFile".equals(an)) {
                source = utf[in.readUnsignedShort()];
            } else {
                in.skipNBytes(len);
            }
        }
        return new Object[] {source, line};
    }

    private static void skipAttributes(DataInputStream in) throws IOException {
        int attrs = in.readUnsignedShort();
        for (int a = 0; a < attrs; ++a) {
            in.skipNBytes(2);
            in.skipNBytes(in.readInt() & 0xFFFFFFFFL);
        }
    }

    /** A Code attribute: the smallest line of its LineNumberTable. */
    private static int firstLine(DataInputStream in, String[] utf) throws IOException {
        in.skipNBytes(4); // max_stack, max_locals
        in.skipNBytes(in.readInt() & 0xFFFFFFFFL); // code
        in.skipNBytes(8L * in.readUnsignedShort()); // exception table
        int attrs = in.readUnsignedShort();
        int best = 0;
        for (int a = 0; a < attrs; ++a) {
            int nameIdx = in.readUnsignedShort();
            int len = in.readInt();
            if ("LineNumberTable".equals(utf[nameIdx])) {
                int k = in.readUnsignedShort();
                for (int j = 0; j < k; ++j) {
                    in.skipNBytes(2);
                    int l = in.readUnsignedShort();
                    if (best == 0 || l < best) {
                        best = l;
                    }
                }
            } else {
                in.skipNBytes(len);
            }
        }
        return best;
    }
}
