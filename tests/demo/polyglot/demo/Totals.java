package demo;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;

import org.futoin.async.AsyncSteps;

/**
 * The order pipeline's Java part (tests/demo/polyglot/README.md): money,
 * in BigDecimal. Each method is a step named by class and method:
 * {@code public static void name(AsyncSteps asi, Object... args)}.
 */
public final class Totals {
    private static final BigDecimal TAX = new BigDecimal("0.0825");
    private static final BigDecimal LIMIT = new BigDecimal("50.00");

    private Totals() {
    }

    /** Subtotal, tax and total of the priced lines, exact to the cent. */
    public static void compute(AsyncSteps asi, Object... args) {
        Map<String, Object> st = asi.state();
        long[] qtys = (long[]) st.get("qtys");
        double[] net = (double[]) st.get("net_prices");
        BigDecimal subtotal = BigDecimal.ZERO;
        for (int i = 0; i < qtys.length; ++i) {
            BigDecimal price = BigDecimal.valueOf(net[i]).setScale(2, RoundingMode.HALF_EVEN);
            subtotal = subtotal.add(price.multiply(BigDecimal.valueOf(qtys[i])));
        }
        BigDecimal tax = subtotal.multiply(TAX).setScale(2, RoundingMode.HALF_EVEN);
        BigDecimal total = subtotal.add(tax);
        st.put("subtotal", subtotal.toPlainString());
        st.put("tax", tax.toPlainString());
        st.put("total", total.toPlainString());
        System.out.println("[java] subtotal " + subtotal + " + tax " + tax + " = " + total);
        System.out.flush();
    }

    /** A customer may not owe more than the limit without a review. */
    public static void checkCredit(AsyncSteps asi, Object... args) {
        Map<String, Object> st = asi.state();
        BigDecimal total = new BigDecimal((String) st.get("total"));
        System.out.println("[java] credit check: " + total + " against the limit " + LIMIT);
        System.out.flush();
        if (total.compareTo(LIMIT) > 0) {
            asi.error("CreditLimit", st.get("customer") + " would owe " + total
                    + ", over the limit of " + LIMIT);
        }
        st.put("status", "APPROVED");
    }
}
