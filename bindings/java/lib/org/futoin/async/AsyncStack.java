package org.futoin.async;

import java.util.ArrayList;
import java.util.List;

/** The async stack of a flow's error as StackTraceElements (see
 *  {@link AsyncSteps#asyncStack()}). */
final class AsyncStack {
    private AsyncStack() {
    }

    /** The frames of the last error of the flow of `handle` (only if it was
     *  recorded for `code`, when not null); empty when none. */
    static StackTraceElement[] of(long handle, String code) {
        Object[] a = (Object[]) FutoInNative.async_stack(handle);
        if (a == null || (code != null && !code.equals(s(a[0])))) {
            return new StackTraceElement[0];
        }
        int elided = Integer.parseInt(s(a[1]));
        int after = Integer.parseInt(s(a[2]));
        int n = (a.length - 3) / 4;
        List<StackTraceElement> out = new ArrayList<>(n + 1);
        for (int i = 0; i < n; ++i) {
            int at = 3 + 4 * i;
            out.add(element(s(a[at]), s(a[at + 1]), s(a[at + 2]), Integer.parseInt(s(a[at + 3]))));
            if (elided > 0 && i == after) {
                out.add(new StackTraceElement("futoin", "elided", "(" + elided + " frames left out)", -1));
            }
        }
        return out.toArray(new StackTraceElement[0]);
    }

    private static String s(Object o) {
        return Values.fromUtf8((byte[]) o);
    }

    /** language "python", function "pricing.apply" -> python:pricing.apply. */
    static StackTraceElement element(String language, String function, String file, int line) {
        String lang = language == null ? "?" : language;
        String cls = lang;
        String method = function == null ? "?" : function;
        int dot = method.lastIndexOf('.');
        if (dot > 0 && dot < method.length() - 1) {
            cls = lang + ":" + method.substring(0, dot);
            method = method.substring(dot + 1);
        }
        return new StackTraceElement(cls, method, file, line > 0 ? line : -1);
    }
}
