package org.futoin.async;

/**
 * The up-calls of the C trampolines (glue/jni_steps.c, glue/jni_tool.c):
 * their method IDs are cached in JNI_OnLoad. Each one catches everything:
 * no Java exception may travel back through C frames. A step's exceptions
 * become the flow's error here ({@link Completions#fail}). Step
 * callbacks return the success() the step kept (see KeptSuccess).
 */
final class Dispatch {
    private Dispatch() {
    }

    /** A step without values (or one that ignores them). */
    static long step0(Rec rec, long bsi) {
        AsyncSteps asi = new AsyncSteps(bsi, rec.tool, rec);
        try {
            Object fn = rec.fn;
            if (rec.arity == 0) {
                ((Step) fn).execute(asi);
            } else {
                call(rec, asi, 0, 0, 0, 0, 0, null, null, null, null);
            }
        } catch (Throwable t) {
            Completions.fail(asi, t);
        }
        return doneStep(asi);
    }

    /** step0() of the Rec in slot `id` of a RecTable's `recs`. */
    static long step0(Object[] recs, int id, long bsi) {
        return step0((Rec) recs[id], bsi);
    }

    /** step1() of the Rec in slot `id` of a RecTable's `recs`. */
    static long step1(Object[] recs, int id, long bsi, int tag, long bits, Object o) {
        return step1((Rec) recs[id], bsi, tag, bits, o);
    }

    /** step() of the Rec in slot `id` of a RecTable's `recs`. */
    static long step(Object[] recs, int id, long bsi, int tags, long b0, long b1, long b2, long b3,
                     Object o0, Object o1, Object o2, Object o3) {
        return step((Rec) recs[id], bsi, tags, b0, b1, b2, b3, o0, o1, o2, o3);
    }

    static long error(Object[] recs, int id, long bsi, Object code) {
        return error((Rec) recs[id], bsi, code);
    }

    static void released(Object[] recs, int id) {
        released((Rec) recs[id]);
    }

    static long origin(Object[] recs, int id) {
        return origin((Rec) recs[id]);
    }

    /** A step with one value. */
    static long step1(Rec rec, long bsi, int tag, long bits, Object o) {
        AsyncSteps asi = new AsyncSteps(bsi, rec.tool, rec);
        run1(rec, asi, tag, bits, o);
        return doneStep(asi);
    }

    /** Runs a step given at most one value (tag 0: none); exceptions become its error. */
    private static void run1(Rec rec, AsyncSteps asi, int tag, long bits, Object o) {
        try {
            int arity = rec.arity;
            if (arity == 0) { /* in place: call() is too big to be inlined here */
                ((Step) rec.fn).execute(asi);
            } else if (arity == 1) {
                ((Step1) rec.fn).execute(asi, tag == 0 ? null : Values.decode(tag, bits, o));
            } else {
                call(rec, asi, tag, bits, 0, 0, 0, o, null, null, null);
            }
        } catch (Throwable t) {
            Completions.fail(asi, t);
        }
    }

    /** A step with several values. */
    static long step(Rec rec, long bsi, int tags, long b0, long b1, long b2, long b3,
                     Object o0, Object o1, Object o2, Object o3) {
        AsyncSteps asi = new AsyncSteps(bsi, rec.tool, rec);
        try {
            call(rec, asi, tags, b0, b1, b2, b3, o0, o1, o2, o3);
        } catch (Throwable t) {
            Completions.fail(asi, t);
        }
        return doneStep(asi);
    }

    private static void call(Rec rec, AsyncSteps asi, int tags, long b0, long b1, long b2, long b3,
                             Object o0, Object o1, Object o2, Object o3) throws Exception {
        {
            Object fn = rec.fn;
            switch (rec.arity) {
                case 0:
                    ((Step) fn).execute(asi);
                    break;
                case 1:
                    ((Step1) fn).execute(asi, v(tags, 0, b0, o0));
                    break;
                case 2:
                    ((Step2) fn).execute(asi, v(tags, 0, b0, o0), v(tags, 1, b1, o1));
                    break;
                case 3:
                    ((Step3) fn).execute(asi, v(tags, 0, b0, o0), v(tags, 1, b1, o1),
                            v(tags, 2, b2, o2));
                    break;
                case 4:
                    ((Step4) fn).execute(asi, v(tags, 0, b0, o0), v(tags, 1, b1, o1),
                            v(tags, 2, b2, o2), v(tags, 3, b3, o3));
                    break;
                default: {
                    int n = tags == 0 ? 0 : (tags & 0xFF00) == 0 ? 1
                            : (tags & 0xFF0000) == 0 ? 2 : (tags & 0xFF000000) == 0 ? 3 : 4;
                    Object[] all = new Object[n];
                    long[] b = {b0, b1, b2, b3};
                    Object[] o = {o0, o1, o2, o3};
                    for (int i = 0; i < n; ++i) {
                        all[i] = v(tags, i, b[i], o[i]);
                    }
                    ((RootCtl.ValuesStep) fn).execute(asi, all);
                    break;
                }
            }
        }
    }

    /** After a step's callback: the next Java steps, or its kept success(). */
    private static long doneStep(AsyncSteps asi) {
        Rec next = KeptSuccess.chainNext(asi);
        return next == null ? done(asi) : chain(asi, next);
    }

    /**
     * Consecutive Java steps of a flow run here, in the up-call of the
     * first one, while the runtime lets them (FutoInNative.chain: each one
     * completes the step before and starts the next). The value a step
     * kept goes to the next one as it is; it never crosses into C. The
     * last step's kept success() is applied here, on its own handle (the
     * trampoline would apply what is returned to the first step's).
     */
    private static long chain(AsyncSteps asi, Rec rec) {
        for (;;) {
            long p = KeptSuccess.take(asi);
            long b = asi.chained;
            StepStates.leave(asi);
            asi = new AsyncSteps(b, rec.tool, rec);
            run1(rec, asi, KeptSuccess.tag(p), KeptSuccess.bits(p), null);
            if ((rec = KeptSuccess.chainNext(asi)) == null) {
                break;
            }
        }
        KeptSuccess.apply(asi);
        StepStates.leave(asi);
        return 0;
    }

    /** After a callback: its kept success() (applied by the trampoline). */
    private static long done(AsyncSteps asi) {
        long p = KeptSuccess.take(asi);
        StepStates.leave(asi);
        return p;
    }

    private static Object v(int tags, int i, long bits, Object o) {
        int tag = (tags >>> (8 * i)) & 0xFF;
        return tag == 0 ? null : Values.decode(tag, bits, o);
    }

    static long error(Rec rec, long bsi, Object code) {
        AsyncSteps asi = new AsyncSteps(bsi, rec.tool, rec);
        try {
            rec.eh.handle(asi, Values.str(code));
        } catch (Throwable t) {
            Completions.fail(asi, t);
        }
        return done(asi);
    }

    static void cancel(Rec rec, long bsi) {
        synchronized (Completions.LOCK) {
            rec.killWaiters(); /* a completion from now on is a lost race */
        }
        AsyncSteps asi = new AsyncSteps(bsi, rec.tool, rec);
        try {
            ((CancelHandler) rec.fn).cancel(asi);
            KeptSuccess.apply(asi); /* a success() here is misuse: let the runtime say so */
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
        StepStates.kill(asi);
    }

    static long loop(Rec rec, long bsi, long i) {
        AsyncSteps asi = new AsyncSteps(bsi, rec.tool, rec);
        try {
            if (i < 0) {
                ((Step) rec.fn).execute(asi);
            } else {
                ((RepeatBody) rec.fn).execute(asi, (int) i);
            }
        } catch (Throwable t) {
            Completions.fail(asi, t);
        }
        return done(asi);
    }

    static void released(Rec rec) {
        try {
            synchronized (Completions.LOCK) {
                rec.killWaiters();
            }
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
    }

    static void unhandled(Rec rec, long bsi, Object code) {
        try {
            ((RootCtl) rec.fn).unhandled(bsi, Values.str(code));
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
    }

    static void drain(Object tool) {
        try {
            ToolTasks.drain((Tool) tool);
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
    }

    /** A turn of the loop of table `index`'s Tool is over (it is about
     *  to wait) and slots were released since the last drain
     *  (glue/jni_rectab.c). */
    static void drainTable(int index) {
        try {
            RecTable t = RecTable.of(index);
            if (t != null) {
                t.drain();
            }
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
    }

    static void timer(Object handle) {
        try {
            ((Tool.Handle) handle).fire();
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
    }

    /** A hook event of a Tool (jni_watch.c): to its listener. */
    static void hook(Object tool, String event, long rootId, long now, String language, String function,
                     String file, int line, String code, String info, String outcome, String waitKind,
                     long due, String waitLanguage, long sync) {
        try {
            java.util.function.Consumer<HookEvent> l = ((Tool) tool).hooks;
            if (l != null) {
                l.accept(new HookEvent(event, rootId, now, language, function, file, line, code, info,
                                       outcome, waitKind, due, waitLanguage, sync));
            }
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
    }

    /** Misuse the runtime reported outside any Java call on this thread. */
    static void misuse(Object tool, String message) {
        try {
            ((Tool) tool).misuse(message);
        } catch (Throwable t) {
            Tool.uncaught(t);
        }
    }

    /** A flow's state map (insertion order, as the spec's JS objects;
     *  values other languages can read go to the shared store too). */
    static Object newState() {
        return new StateMap();
    }

    /** Where the step of `rec` came from: a futoin_frame_origin*, or 0. */
    static long origin(Rec rec) {
        try {
            return Origins.of(rec.fn);
        } catch (Throwable t) {
            return 0;
        }
    }

    /** The java host's resolve(): a Rec, or the UTF-8 bytes of why not. */
    static Object resolve(byte[] module, byte[] function) {
        try {
            return Polyglot.resolve(Values.fromUtf8(module), Values.fromUtf8(function));
        } catch (Throwable t) {
            return Values.cstr("java: resolving " + Values.fromUtf8(module) + "." + Values.fromUtf8(function)
                    + " failed: " + t);
        }
    }

    /** A value C read from the shared state. */
    static Object decode(int tag, long bits, Object o) {
        return Values.decode(tag, bits, o);
    }
}
