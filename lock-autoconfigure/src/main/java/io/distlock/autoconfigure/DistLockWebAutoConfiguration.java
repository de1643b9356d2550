package io.distlock.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigureOrder;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.http.ProblemDetail;

/**
 * Maps {@link io.distlock.annotation.LockAcquisitionException} to a problem response in Spring MVC and
 * WebFlux applications ({@link LockAcquisitionProblemHandler}); {@code distlock.web.problem-details=false}
 * turns it off.
 */
@AutoConfiguration(after = DistLockAutoConfiguration.class)
@AutoConfigureOrder(Ordered.LOWEST_PRECEDENCE)
@ConditionalOnWebApplication
@ConditionalOnClass(ProblemDetail.class)
@ConditionalOnProperty(prefix = "distlock.web", name = "problem-details", matchIfMissing = true)
public class DistLockWebAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LockAcquisitionProblemHandler lockAcquisitionProblemHandler(ObjectProvider<DistLockProperties> properties) {
		return new LockAcquisitionProblemHandler(
				properties.getIfAvailable(DistLockProperties::new).getWeb().getRetryAfter());
	}

}
