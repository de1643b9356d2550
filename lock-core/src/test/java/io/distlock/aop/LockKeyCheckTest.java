package io.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Method;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.util.ReflectionUtils;

import io.distlock.annotation.DistributedLock;

/**
 * Key expressions that would collapse many calls onto one lock, or fail at every call, are caught:
 * the misspelt parameter and the unquoted constant when the method is first looked at (at start-up,
 * when the bean is proxied), the {@code null} part of a concatenation at the call, before any lock
 * is taken. Each case beside its correct twin, so a check that refused everything would fail too.
 */
class LockKeyCheckTest {

	private final LockAttributeSource attributes = new LockAttributeSource(null);

	private final LockKeyEvaluator keys = new LockKeyEvaluator(null);

	@Test
	void aKeyNamingAParameterTheMethodDoesNotHaveFailsNamingTheMethodAndItsParameters() {
		assertThatThrownBy(() -> attribute("misspelt"))
			.isInstanceOf(InvalidLockAnnotationException.class)
			.hasMessageContaining("Keys.misspelt(String)")
			.hasMessageContaining("names #orderId, which is not a parameter of the method (its parameters: #id)");
		assertThat(attribute("byId")).isNotNull();
	}

	@Test
	void anUnquotedConstantFailsSayingHowToQuoteIt() {
		assertThatThrownBy(() -> attribute("unquoted"))
			.isInstanceOf(InvalidLockAnnotationException.class)
			.hasMessageContaining("Keys.unquoted()")
			.hasMessageContaining("reads 'nightly' as a property of the call")
			.hasMessageContaining("a constant must be quoted: \"'nightly-report'\"");
		assertThat(lockNames("quoted")).containsExactly("nightly-report");
	}

	@Test
	void aParameterWrittenWithoutItsHashIsPointedOut() {
		assertThatThrownBy(() -> attribute("withoutHash"))
			.isInstanceOf(InvalidLockAnnotationException.class)
			.hasMessageContaining("did you mean #id (the parameter)?");
	}

	@Test
	void theCallsOwnPropertiesPathsIntoArgumentsAndMapKeysStayAllowed() {
		assertThat(lockNames("rootProperty", "x")).containsExactly("rootProperty");
		assertThat(lockNames("pathAndProjection", List.of("a", "b"))).containsExactly("[1, 1]");
		assertThat(lockNames("positional", "o-9")).containsExactly("o-9");
	}

	@Test
	void aNullPartOfAConcatenatedKeyFailsTheCallLikeANullKey() {
		assertThatThrownBy(() -> lockNames("byId", (Object) null))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("Keys.byId(String)")
			.hasMessageContaining("its part #id is null, so every such call would share the lock 'order:null'")
			.hasMessageContaining("(#id ?: 'none')");
		assertThat(lockNames("byId", "o-1")).containsExactly("order:o-1");
		// A value that only contains the text "null" is a value.
		assertThat(lockNames("byId", "nullable")).containsExactly("order:nullable");
		// The explicit default the message proposes works.
		assertThat(lockNames("withDefault", (Object) null)).containsExactly("order:none");
	}

	private LockAttribute attribute(String methodName) {
		return this.attributes.find(method(methodName), Keys.class).orElseThrow();
	}

	private List<String> lockNames(String methodName, Object... arguments) {
		LockAttribute attribute = attribute(methodName);
		return this.keys.lockNames(attribute, this.keys.context(attribute.method(), new Keys(), arguments));
	}

	private static Method method(String name) {
		for (Method method : Keys.class.getDeclaredMethods()) {
			if (method.getName().equals(name)) {
				return method;
			}
		}
		throw new IllegalArgumentException(name);
	}

	static class Keys {

		@DistributedLock(key = "'order:' + #id")
		void byId(String id) {
		}

		@DistributedLock(key = "'order:' + (#id ?: 'none')")
		void withDefault(String id) {
		}

		@DistributedLock(key = "'order:' + #orderId")
		void misspelt(String id) {
		}

		@DistributedLock(key = "nightly-report")
		void unquoted() {
		}

		@DistributedLock(key = "'nightly-report'")
		void quoted() {
		}

		@DistributedLock(key = "'order:' + id")
		void withoutHash(String id) {
		}

		@DistributedLock(key = "method.name")
		void rootProperty(String id) {
		}

		@DistributedLock(key = "#ids.![length()]")
		void pathAndProjection(List<String> ids) {
		}

		@DistributedLock(key = "#p0")
		void positional(String id) {
		}

	}

	static {
		// The test relies on parameter names, as an application built with Spring Boot's plugins does.
		ReflectionUtils.doWithMethods(Keys.class, method -> {
			if (method.getParameterCount() > 0 && !method.getParameters()[0].isNamePresent()) {
				throw new IllegalStateException("compile with -parameters");
			}
		}, method -> method.getDeclaringClass() == Keys.class);
	}

}
