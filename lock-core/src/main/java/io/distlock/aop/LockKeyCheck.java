package io.distlock.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.ExpressionState;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.OpPlus;
import org.springframework.expression.spel.ast.Operator;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * The mistakes in a key expression that parse, evaluate, and quietly collapse many calls onto one
 * lock: a {@code #name} the method has no parameter for (it evaluates to {@code null}), an unquoted
 * constant ({@code nightly-report} reads the properties {@code nightly} and {@code report} of the
 * call and fails at every call), and, at call time, a {@code null} part of a concatenation
 * ({@code 'order:' + #id} turns into {@code order:null}). The first two are found once, at start-up.
 */
final class LockKeyCheck {

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	/** What a key may read from the call itself: the properties of {@link LockExpressionRoot}. */
	private static final Set<String> ROOT_PROPERTIES = Set.of("method", "target", "args");

	private LockKeyCheck() {
	}

	/**
	 * @param description the method, as messages name it
	 * @param method the annotated method
	 * @param attribute {@code key} or {@code fallback}
	 * @param text the expression as written
	 * @param expression its parsed form
	 * @throws InvalidLockAnnotationException if it names a variable the call does not define, or reads
	 * a property of the call that does not exist (an unquoted constant)
	 */
	static void atStartUp(String description, Method method, String attribute, String text, Expression expression) {
		if (!(expression instanceof SpelExpression spel)) {
			return;
		}
		Set<String> variables = variables(method);
		checkVariables(spel.getAST(), variables, description, method, attribute, text);
		checkRootReads(spel.getAST(), variables, description, attribute, text);
	}

	/**
	 * @return the parts of a top-level concatenation ({@code a + b + c}), or an empty list if the
	 * expression is not one; evaluated again only when a call's key reads "null"
	 */
	static List<SpelNode> concatenatedParts(Expression expression) {
		if (!(expression instanceof SpelExpression spel) || !(spel.getAST() instanceof OpPlus)) {
			return List.of();
		}
		List<SpelNode> parts = new ArrayList<>();
		flatten(spel.getAST(), parts);
		return List.copyOf(parts);
	}

	private static void flatten(SpelNode node, List<SpelNode> parts) {
		if (node instanceof OpPlus plus && plus.getChildCount() == 2) {
			flatten(plus.getChild(0), parts);
			flatten(plus.getChild(1), parts);
		}
		else {
			parts.add(node);
		}
	}

	/**
	 * @return the first part of a concatenation that is {@code null} in this call, or {@code null}
	 */
	static SpelNode nullPart(List<SpelNode> parts, EvaluationContext context) {
		for (SpelNode part : parts) {
			if (part.getValue(new ExpressionState(context)) == null) {
				return part;
			}
		}
		return null;
	}

	/** @return the variables a call's evaluation context defines: the parameters by name, p0/a0, root, this */
	private static Set<String> variables(Method method) {
		Set<String> names = new LinkedHashSet<>();
		String[] parameters = PARAMETER_NAMES.getParameterNames(method);
		if (parameters != null) {
			names.addAll(Arrays.asList(parameters));
		}
		for (int i = 0; i < method.getParameterCount(); i++) {
			names.add("p" + i);
			names.add("a" + i);
		}
		names.add("root");
		names.add("this");
		return names;
	}

	private static void checkVariables(SpelNode node, Set<String> variables, String description, Method method,
			String attribute, String text) {
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			if (!variables.contains(name)) {
				String[] parameters = PARAMETER_NAMES.getParameterNames(method);
				String known = (parameters == null || parameters.length == 0) ? "" : Arrays.stream(parameters)
					.map(parameter -> "#" + parameter).collect(Collectors.joining(", ", " (its parameters: ", ")"));
				String hint = (parameters == null && method.getParameterCount() > 0)
						? "; its parameter names are not in the class file: compile with -parameters (Spring Boot's "
								+ "Maven and Gradle plugins do) or write #p0, #p1, ..."
						: "; fix the name, or it would be null at every call and every call would share one lock";
				hint += " (docs/annotation.md#keys)";
				throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": " + attribute + " '"
						+ text + "' names #" + name + ", which is not a parameter of the method" + known + hint, null);
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			checkVariables(node.getChild(i), variables, description, method, attribute, text);
		}
	}

	/**
	 * Looks only where a name is read from the call itself (the whole expression, an operand of an
	 * operator, the start of a property path): inside a projection, a selection or after a dot a
	 * name is a property of something else, and inside an indexer a map key.
	 */
	private static void checkRootReads(SpelNode node, Set<String> variables, String description, String attribute,
			String text) {
		if (node instanceof PropertyOrFieldReference property) {
			if (!ROOT_PROPERTIES.contains(property.getName())) {
				String suggestion = variables.contains(property.getName())
						? "did you mean #" + property.getName() + " (the parameter)? "
						: "";
				throw new InvalidLockAnnotationException("@DistributedLock on " + description + ": " + attribute + " '"
						+ text + "' reads '" + property.getName() + "' as a property of the call, which has none of that "
						+ "name, so every call would fail; " + suggestion + "a constant must be quoted: \"'" + text
						+ "'\" (docs/annotation.md#keys)", null);
			}
		}
		else if (node instanceof Operator) {
			for (int i = 0; i < node.getChildCount(); i++) {
				checkRootReads(node.getChild(i), variables, description, attribute, text);
			}
		}
		else if (node instanceof CompoundExpression && node.getChildCount() > 0) {
			checkRootReads(node.getChild(0), variables, description, attribute, text);
		}
	}

}
