package io.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.context.annotation.Conditional;

/**
 * Matches when Redlock's masters are known: listed in {@code distlock.redlock.nodes}, or given by a
 * {@link RedlockConnectionDetails} bean.
 */
class RedlockNodesCondition extends AnyNestedCondition {

	RedlockNodesCondition() {
		super(ConfigurationPhase.REGISTER_BEAN);
	}

	@Conditional(OnRedlockNodesCondition.class)
	static class Listed {

	}

	@ConditionalOnBean(RedlockConnectionDetails.class)
	static class Connected {

	}

	/** The opposite: no Redlock masters, so the application's own Redis holds the locks. */
	static class Absent extends NoneNestedConditions {

		Absent() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@Conditional(OnRedlockNodesCondition.class)
		static class Listed {

		}

		@ConditionalOnBean(RedlockConnectionDetails.class)
		static class Connected {

		}

	}

}
