package io.distlock.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.function.SingletonSupplier;

import io.distlock.LockRegistry;
import io.distlock.aop.DistributedLockAdvisor;
import io.distlock.aop.DistributedLockInterceptor;
import io.distlock.aop.DistributedLockObserver;
import io.distlock.aop.LockAttributeSource;
import io.distlock.aop.LockDefaults;

/**
 * Applies {@code @DistributedLock}. Registers an auto-proxy creator if the application has none, so
 * that annotated methods can never run unlocked merely because AOP auto-proxying was switched off.
 *
 * <p>The advisor is created early (auto-proxy creators need it before other beans); it therefore
 * reaches the registry and the properties lazily, at the first locked call.
 */
@AutoConfiguration(after = DistLockAutoConfiguration.class)
@ConditionalOnClass(DistributedLockAdvisor.class)
@ConditionalOnProperty(prefix = "distlock", name = "enabled", havingValue = "true", matchIfMissing = true)
@Import(DistLockAopAutoConfiguration.AutoProxyRegistrar.class)
public class DistLockAopAutoConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static DistributedLockAdvisor distributedLockAdvisor(BeanFactory beanFactory,
			ObjectProvider<LockRegistry> registry, ObjectProvider<DistLockProperties> properties,
			ObjectProvider<DistributedLockObserver> observers, org.springframework.core.env.Environment environment) {
		LockAttributeSource attributes = new LockAttributeSource(beanFactory);
		SingletonSupplier<LockDefaults> defaults = SingletonSupplier.of(() -> {
			DistLockProperties settings = properties.getObject();
			return new LockDefaults(settings.getWaitTime(), settings.getLeaseTime());
		});
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(attributes, registry, defaults,
				beanFactory, SingletonSupplier.of(() -> observers.orderedStream().toList()));
		int order = environment.getProperty("distlock.advisor-order", Integer.class,
				DistLockProperties.DEFAULT_ADVISOR_ORDER);
		return new DistributedLockAdvisor(attributes, interceptor, order);
	}

	/**
	 * Registers Spring's infrastructure auto-proxy creator unless a more capable one exists, as
	 * {@code @EnableTransactionManagement} does.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
			AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
		}

	}

}
