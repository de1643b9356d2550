package io.distlock.autoconfigure;

import java.util.List;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code distlock.redlock.nodes} lists nodes, written as a YAML list or as one
 * comma-separated value.
 */
class OnRedlockNodesCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		List<String> nodes = Binder.get(context.getEnvironment())
			.bind("distlock.redlock.nodes", Bindable.listOf(String.class))
			.orElse(List.of());
		String message = nodes.isEmpty() ? "distlock.redlock.nodes is not set"
				: "distlock.redlock.nodes lists " + nodes.size() + " nodes";
		return new ConditionOutcome(!nodes.isEmpty(), message);
	}

}
