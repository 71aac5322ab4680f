/** A program in a named module of its own that requires the binding's
 *  module (test.sh runs it on the module path). */
module demo {
    requires org.futoin.async;
}
